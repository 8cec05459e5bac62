/**
 * The request structs of Nomad's `api` package (hashicorp/nomad api/jobs.go, api/tasks.go,
 * api/resources.go, api/services.go, api/scaling.go, api/constraint.go), as JSON key → Go type,
 * Keys are Go field names.
 */
import type { GoType } from './gojson.js';

const str: GoType = { k: 'string' };
const bool: GoType = { k: 'bool' };
const int: GoType = { k: 'int', name: 'int', min: -(2 ** 53), max: 2 ** 53 };
const int64: GoType = { k: 'int', name: 'int64', min: -(2 ** 53), max: 2 ** 53 };
const uint64: GoType = { k: 'int', name: 'uint64', min: 0, max: 2 ** 53 };
const int8: GoType = { k: 'int', name: 'int8', min: -128, max: 127 };
const uint8: GoType = { k: 'int', name: 'uint8', min: 0, max: 255 };
const dur: GoType = { k: 'duration' };
const any: GoType = { k: 'any' };
const strs: GoType = { k: 'slice', of: str };
const strMap: GoType = { k: 'map', of: str };
const anyMap: GoType = { k: 'map', of: any };
const slice = (of: GoType): GoType => ({ k: 'slice', of });
const struct = (name: string, fields: () => Record<string, GoType>): GoType => ({ k: 'struct', name, fields });

const Constraint = struct('Constraint', () => ({ LTarget: str, RTarget: str, Operand: str }));
const Affinity = struct('Affinity', () => ({ LTarget: str, RTarget: str, Operand: str, Weight: int8 }));
const Spread = struct('Spread', () => ({
  Attribute: str,
  Weight: int8,
  SpreadTarget: slice(struct('SpreadTarget', () => ({ Value: str, Percent: uint8 }))),
}));
const UpdateStrategy = struct('UpdateStrategy', () => ({
  Stagger: dur,
  MaxParallel: int,
  HealthCheck: str,
  MinHealthyTime: dur,
  HealthyDeadline: dur,
  ProgressDeadline: dur,
  Canary: int,
  AutoRevert: bool,
  AutoPromote: bool,
}));
const MigrateStrategy = struct('MigrateStrategy', () => ({
  MaxParallel: int,
  HealthCheck: str,
  MinHealthyTime: dur,
  HealthyDeadline: dur,
}));
const ReschedulePolicy = struct('ReschedulePolicy', () => ({
  Attempts: int,
  Interval: dur,
  Delay: dur,
  DelayFunction: str,
  MaxDelay: dur,
  Unlimited: bool,
}));
const RestartPolicy = struct('RestartPolicy', () => ({ Interval: dur, Attempts: int, Delay: dur, Mode: str, RenderTemplates: bool }));
const Port = struct('Port', () => ({ Label: str, Value: int, To: int, HostNetwork: str, IgnoreCollision: bool }));
const NetworkResource = struct('NetworkResource', () => ({
  Mode: str,
  Device: str,
  CIDR: str,
  IP: str,
  DNS: struct('DNSConfig', () => ({ Servers: strs, Searches: strs, Options: strs })),
  ReservedPorts: slice(Port),
  DynamicPorts: slice(Port),
  Hostname: str,
  MBits: int,
  CNI: struct('CNIConfig', () => ({ Args: strMap })),
}));
const CheckRestart = struct('CheckRestart', () => ({ Limit: int, Grace: dur, IgnoreWarnings: bool }));
const WorkloadIdentity = struct('WorkloadIdentity', () => ({
  Name: str,
  Audience: strs,
  ChangeMode: str,
  ChangeSignal: str,
  Env: bool,
  File: bool,
  Filepath: str,
  ServiceName: str,
  TTL: dur,
  ExtraClaims: strs,
}));
const ServiceCheck = struct('ServiceCheck', () => ({
  Name: str,
  Type: str,
  Command: str,
  Args: strs,
  Path: str,
  Protocol: str,
  PortLabel: str,
  Expose: bool,
  AddressMode: str,
  Advertise: str,
  Interval: dur,
  Timeout: dur,
  InitialStatus: str,
  Notes: str,
  TLSServerName: str,
  TLSSkipVerify: bool,
  Header: { k: 'map', of: strs },
  Method: str,
  CheckRestart,
  GRPCService: str,
  GRPCUseTLS: bool,
  TaskName: str,
  SuccessBeforePassing: int,
  FailuresBeforeCritical: int,
  FailuresBeforeWarning: int,
  Body: str,
  OnUpdate: str,
}));
const Service = struct('Service', () => ({
  Name: str,
  Tags: strs,
  CanaryTags: strs,
  EnableTagOverride: bool,
  PortLabel: str,
  AddressMode: str,
  Address: str,
  Checks: slice(ServiceCheck),
  CheckRestart,
  Connect: any,
  Meta: strMap,
  CanaryMeta: strMap,
  TaggedAddresses: strMap,
  TaskName: str,
  OnUpdate: str,
  Identity: WorkloadIdentity,
  Weights: struct('ServiceWeights', () => ({ Passing: int, Warning: int })),
  Provider: str,
  Cluster: str,
  Kind: str,
}));
const ScalingPolicy = struct('ScalingPolicy', () => ({
  Min: int64,
  Max: int64,
  Policy: anyMap,
  Enabled: bool,
  Type: str,
  ID: str,
  Namespace: str,
  Target: strMap,
  CreateIndex: uint64,
  ModifyIndex: uint64,
}));
const Consul = struct('Consul', () => ({ Namespace: str, Cluster: str, Partition: str }));
const Resources = struct('Resources', () => ({
  CPU: int,
  Cores: int,
  MemoryMB: int,
  MemoryMaxMB: int,
  DiskMB: int,
  Networks: slice(NetworkResource),
  Devices: slice(
    struct('RequestedDevice', () => ({ Name: str, Count: uint64, Constraints: slice(Constraint), Affinities: slice(Affinity) })),
  ),
  NUMA: struct('NUMAResource', () => ({ Affinity: str, Devices: strs })),
  SecretsMB: int,
  IOPS: int,
}));
const TaskArtifact = struct('TaskArtifact', () => ({
  GetterSource: str,
  GetterOptions: strMap,
  GetterHeaders: strMap,
  GetterMode: str,
  GetterInsecure: bool,
  RelativeDest: str,
  Chown: bool,
}));
const Template = struct('Template', () => ({
  SourcePath: str,
  DestPath: str,
  EmbeddedTmpl: str,
  ChangeMode: str,
  ChangeScript: struct('ChangeScript', () => ({ Command: str, Args: strs, Timeout: dur, FailOnError: bool, RunOnFirstRender: bool })),
  ChangeSignal: str,
  Once: bool,
  Splay: dur,
  Perms: str,
  Uid: int,
  Gid: int,
  LeftDelim: str,
  RightDelim: str,
  Envvars: bool,
  VaultGrace: dur,
  Wait: struct('WaitConfig', () => ({ Min: dur, Max: dur })),
  ErrMissingKey: bool,
}));
const Task = struct('Task', () => ({
  Name: str,
  Driver: str,
  User: str,
  Lifecycle: struct('TaskLifecycle', () => ({ Hook: str, Sidecar: bool })),
  Config: anyMap,
  Constraints: slice(Constraint),
  Affinities: slice(Affinity),
  Env: strMap,
  Services: slice(Service),
  Resources,
  RestartPolicy,
  Meta: strMap,
  KillTimeout: dur,
  LogConfig: struct('LogConfig', () => ({ MaxFiles: int, MaxFileSizeMB: int, Enabled: bool, Disabled: bool })),
  Artifacts: slice(TaskArtifact),
  Vault: struct('Vault', () => ({
    Policies: strs,
    Role: str,
    Namespace: str,
    Cluster: str,
    Env: bool,
    DisableFile: bool,
    ChangeMode: str,
    ChangeSignal: str,
    AllowTokenExpiration: bool,
  })),
  Consul,
  Templates: slice(Template),
  DispatchPayload: struct('DispatchPayloadConfig', () => ({ File: str })),
  VolumeMounts: slice(
    struct('VolumeMount', () => ({ Volume: str, Destination: str, ReadOnly: bool, PropagationMode: str, SELinuxLabel: str })),
  ),
  CSIPluginConfig: any,
  Leader: bool,
  ShutdownDelay: dur,
  KillSignal: str,
  Kind: str,
  ScalingPolicies: slice(ScalingPolicy),
  Secrets: slice(struct('Secret', () => ({ Name: str, Provider: str, Path: str, Config: anyMap, Env: strMap }))),
  Identity: WorkloadIdentity,
  Identities: slice(WorkloadIdentity),
  Actions: slice(struct('Action', () => ({ Name: str, Command: str, Args: strs }))),
  Schedule: any,
}));
const TaskGroup = struct('TaskGroup', () => ({
  Name: str,
  Count: int,
  Constraints: slice(Constraint),
  Affinities: slice(Affinity),
  Tasks: slice(Task),
  Spreads: slice(Spread),
  Volumes: { k: 'map', of: any },
  RestartPolicy,
  Disconnect: struct('DisconnectStrategy', () => ({ LostAfter: dur, StopOnClientAfter: dur, Replace: bool, Reconcile: str })),
  ReschedulePolicy,
  EphemeralDisk: struct('EphemeralDisk', () => ({ Sticky: bool, Migrate: bool, SizeMB: int })),
  Update: UpdateStrategy,
  Migrate: MigrateStrategy,
  Networks: slice(NetworkResource),
  Meta: strMap,
  Services: slice(Service),
  ShutdownDelay: dur,
  MaxRunDuration: dur,
  Scaling: ScalingPolicy,
  Consul,
  StopAfterClientDisconnect: dur,
  MaxClientDisconnect: dur,
  PreventRescheduleOnLost: bool,
}));
export const JobType = struct('Job', () => ({
  Region: str,
  Namespace: str,
  ID: str,
  Name: str,
  Type: str,
  Priority: int,
  AllAtOnce: bool,
  Datacenters: strs,
  NodePool: str,
  Constraints: slice(Constraint),
  Affinities: slice(Affinity),
  TaskGroups: slice(TaskGroup),
  Update: UpdateStrategy,
  Multiregion: any,
  Spreads: slice(Spread),
  Periodic: struct('PeriodicConfig', () => ({
    Enabled: bool,
    Spec: str,
    Specs: strs,
    SpecType: str,
    ProhibitOverlap: bool,
    TimeZone: str,
  })),
  ParameterizedJob: struct('ParameterizedJobConfig', () => ({ Payload: str, MetaRequired: strs, MetaOptional: strs })),
  Reschedule: ReschedulePolicy,
  Migrate: MigrateStrategy,
  Meta: strMap,
  UI: struct('JobUIConfig', () => ({ Description: str, Links: slice(struct('JobUILink', () => ({ Label: str, URL: str }))) })),
  // Server-set fields: accepted on input (a job read back may be sent again).
  Stop: bool,
  ParentID: str,
  Dispatched: bool,
  DispatchIdempotencyToken: str,
  Payload: { k: 'bytes' },
  ConsulNamespace: str,
  VaultNamespace: str,
  NomadTokenID: str,
  Status: str,
  StatusDescription: str,
  Stable: bool,
  Version: uint64,
  SubmitTime: int64,
  CreateIndex: uint64,
  ModifyIndex: uint64,
  JobModifyIndex: uint64,
  VersionTag: struct('JobVersionTag', () => ({ Name: str, Description: str, TaggedTime: int64 })),
}));

const writeRequest = { Region: str, Namespace: str, SecretID: str, IdempotencyToken: str };

export const JobRegisterRequestType = struct('JobRegisterRequest', () => ({
  Job: JobType,
  Submission: struct('JobSubmission', () => ({ Source: str, Format: str, VariableFlags: strMap, Variables: str })),
  EnforceIndex: bool,
  JobModifyIndex: uint64,
  PolicyOverride: bool,
  PreserveCounts: bool,
  PreserveResources: bool,
  EvalPriority: int,
  ...writeRequest,
}));
export const JobPlanRequestType = struct('JobPlanRequest', () => ({ Job: JobType, Diff: bool, PolicyOverride: bool, ...writeRequest }));
export const JobValidateRequestType = struct('JobValidateRequest', () => ({ Job: JobType, ...writeRequest }));
export const ScalingRequestType = struct('ScalingRequest', () => ({
  Count: int64,
  Target: strMap,
  Message: str,
  Error: bool,
  Meta: anyMap,
  PolicyOverride: bool,
  JobModifyIndex: uint64,
  ...writeRequest,
}));
