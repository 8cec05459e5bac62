/**
 * Key whitelists of every Nomad JSON object svc may send, with each key's
 * type, from the `api` package of hashicorp/nomad (2.0.x: api/jobs.go,
 * api/tasks.go, api/services.go…). Nomad ignores unknown keys
 * silently, so the validator refuses them.
 *
 * Types: `str`, `int`, `uint` (int ≥ 0), `bool`, `dur` (integer ns),
 * `strs` ([]string), `strMap` (map[string]string), `obj` (any JSON object,
 * e.g. a policy), `headers` (map[string][]string), `any`; `{ obj }`,
 * `{ list }`, `{ map }` of a nested shape.
 */
export type Scalar = 'str' | 'int' | 'uint' | 'bool' | 'dur' | 'strs' | 'strMap' | 'obj' | 'headers' | 'any';
export type FieldType = Scalar | { readonly obj: Shape } | { readonly list: Shape } | { readonly map: Shape };
export interface Shape {
  readonly name: string;
  readonly fields: Readonly<Record<string, FieldType>>;
}

const shape = (name: string, fields: Record<string, FieldType>): Shape => ({ name, fields });

export const constraintShape = shape('Constraint', { LTarget: 'str', RTarget: 'str', Operand: 'str' });
export const affinityShape = shape('Affinity', { LTarget: 'str', RTarget: 'str', Operand: 'str', Weight: 'int' });
export const spreadShape = shape('Spread', {
  Attribute: 'str',
  Weight: 'int',
  SpreadTarget: { list: shape('SpreadTarget', { Value: 'str', Percent: 'uint' }) },
});
export const updateShape = shape('UpdateStrategy', {
  Stagger: 'dur',
  MaxParallel: 'int',
  HealthCheck: 'str',
  MinHealthyTime: 'dur',
  HealthyDeadline: 'dur',
  ProgressDeadline: 'dur',
  Canary: 'int',
  AutoRevert: 'bool',
  AutoPromote: 'bool',
});
export const migrateShape = shape('MigrateStrategy', {
  MaxParallel: 'int',
  HealthCheck: 'str',
  MinHealthyTime: 'dur',
  HealthyDeadline: 'dur',
});
export const restartShape = shape('RestartPolicy', {
  Interval: 'dur',
  Attempts: 'int',
  Delay: 'dur',
  Mode: 'str',
  RenderTemplates: 'bool',
});
export const rescheduleShape = shape('ReschedulePolicy', {
  Attempts: 'int',
  Interval: 'dur',
  Delay: 'dur',
  DelayFunction: 'str',
  MaxDelay: 'dur',
  Unlimited: 'bool',
});
const portShape = shape('Port', { Label: 'str', Value: 'int', To: 'int', HostNetwork: 'str', IgnoreCollision: 'bool' });
export const networkShape = shape('NetworkResource', {
  Mode: 'str',
  Device: 'str',
  CIDR: 'str',
  IP: 'str',
  Hostname: 'str',
  MBits: 'int',
  DNS: { obj: shape('DNSConfig', { Servers: 'strs', Searches: 'strs', Options: 'strs' }) },
  ReservedPorts: { list: portShape },
  DynamicPorts: { list: portShape },
  CNI: { obj: shape('CNIConfig', { Args: 'strMap' }) },
});
const checkRestartShape = shape('CheckRestart', { Limit: 'int', Grace: 'dur', IgnoreWarnings: 'bool' });
const identityShape = shape('WorkloadIdentity', {
  Name: 'str',
  Audience: 'strs',
  ChangeMode: 'str',
  ChangeSignal: 'str',
  Env: 'bool',
  File: 'bool',
  Filepath: 'str',
  ServiceName: 'str',
  TTL: 'dur',
  ExtraClaims: 'strs',
});
export const checkShape = shape('ServiceCheck', {
  Name: 'str',
  Type: 'str',
  Command: 'str',
  Args: 'strs',
  Path: 'str',
  Protocol: 'str',
  PortLabel: 'str',
  Expose: 'bool',
  AddressMode: 'str',
  Advertise: 'str',
  Interval: 'dur',
  Timeout: 'dur',
  InitialStatus: 'str',
  Notes: 'str',
  TLSServerName: 'str',
  TLSSkipVerify: 'bool',
  Header: 'headers',
  Method: 'str',
  CheckRestart: { obj: checkRestartShape },
  GRPCService: 'str',
  GRPCUseTLS: 'bool',
  TaskName: 'str',
  SuccessBeforePassing: 'int',
  FailuresBeforeCritical: 'int',
  FailuresBeforeWarning: 'int',
  Body: 'str',
  OnUpdate: 'str',
});
export const serviceShape = shape('Service', {
  Name: 'str',
  Tags: 'strs',
  CanaryTags: 'strs',
  EnableTagOverride: 'bool',
  PortLabel: 'str',
  AddressMode: 'str',
  Address: 'str',
  Checks: { list: checkShape },
  CheckRestart: { obj: checkRestartShape },
  Meta: 'strMap',
  CanaryMeta: 'strMap',
  TaggedAddresses: 'strMap',
  TaskName: 'str',
  OnUpdate: 'str',
  Identity: { obj: identityShape },
  Weights: { obj: shape('ServiceWeights', { Passing: 'int', Warning: 'int' }) },
  Provider: 'str',
  Cluster: 'str',
  Kind: 'str',
  // Connect is deliberately absent: svc does not use service mesh sidecars (refused rather than half-supported).
});
export const resourcesShape = shape('Resources', {
  CPU: 'int',
  Cores: 'int',
  MemoryMB: 'int',
  MemoryMaxMB: 'int',
  DiskMB: 'int',
  Networks: { list: networkShape },
  Devices: {
    list: shape('RequestedDevice', {
      Name: 'str',
      Count: 'uint',
      Constraints: { list: constraintShape },
      Affinities: { list: affinityShape },
    }),
  },
  NUMA: { obj: shape('NUMAResource', { Affinity: 'str', Devices: 'strs' }) },
  SecretsMB: 'int',
  IOPS: 'int',
});
const logShape = shape('LogConfig', { MaxFiles: 'int', MaxFileSizeMB: 'int', Enabled: 'bool', Disabled: 'bool' });
const artifactShape = shape('TaskArtifact', {
  GetterSource: 'str',
  GetterOptions: 'strMap',
  GetterHeaders: 'strMap',
  GetterMode: 'str',
  GetterInsecure: 'bool',
  RelativeDest: 'str',
  Chown: 'bool',
});
const templateShape = shape('Template', {
  SourcePath: 'str',
  DestPath: 'str',
  EmbeddedTmpl: 'str',
  ChangeMode: 'str',
  ChangeScript: {
    obj: shape('ChangeScript', { Command: 'str', Args: 'strs', Timeout: 'dur', FailOnError: 'bool', RunOnFirstRender: 'bool' }),
  },
  ChangeSignal: 'str',
  Once: 'bool',
  Splay: 'dur',
  Perms: 'str',
  Uid: 'int',
  Gid: 'int',
  LeftDelim: 'str',
  RightDelim: 'str',
  Envvars: 'bool',
  VaultGrace: 'dur',
  Wait: { obj: shape('WaitConfig', { Min: 'dur', Max: 'dur' }) },
  ErrMissingKey: 'bool',
});
const vaultShape = shape('Vault', {
  Policies: 'strs',
  Role: 'str',
  Namespace: 'str',
  Cluster: 'str',
  Env: 'bool',
  DisableFile: 'bool',
  ChangeMode: 'str',
  ChangeSignal: 'str',
  AllowTokenExpiration: 'bool',
});
const consulShape = shape('Consul', { Namespace: 'str', Cluster: 'str', Partition: 'str' });
export const scalingShape = shape('ScalingPolicy', { Min: 'int', Max: 'int', Policy: 'obj', Enabled: 'bool', Type: 'str' });
export const taskShape = shape('Task', {
  Name: 'str',
  Driver: 'str',
  User: 'str',
  Lifecycle: { obj: shape('TaskLifecycle', { Hook: 'str', Sidecar: 'bool' }) },
  Config: 'obj',
  Constraints: { list: constraintShape },
  Affinities: { list: affinityShape },
  Env: 'strMap',
  Services: { list: serviceShape },
  Resources: { obj: resourcesShape },
  RestartPolicy: { obj: restartShape },
  Meta: 'strMap',
  KillTimeout: 'dur',
  LogConfig: { obj: logShape },
  Artifacts: { list: artifactShape },
  Vault: { obj: vaultShape },
  Consul: { obj: consulShape },
  Templates: { list: templateShape },
  DispatchPayload: { obj: shape('DispatchPayloadConfig', { File: 'str' }) },
  VolumeMounts: {
    list: shape('VolumeMount', { Volume: 'str', Destination: 'str', ReadOnly: 'bool', PropagationMode: 'str', SELinuxLabel: 'str' }),
  },
  CSIPluginConfig: 'obj',
  Leader: 'bool',
  ShutdownDelay: 'dur',
  KillSignal: 'str',
  Kind: 'str',
  ScalingPolicies: { list: scalingShape },
  Secrets: { list: shape('Secret', { Name: 'str', Provider: 'str', Path: 'str', Config: 'obj', Env: 'strMap' }) },
  Identity: { obj: identityShape },
  Identities: { list: identityShape },
  Actions: { list: shape('Action', { Name: 'str', Command: 'str', Args: 'strs' }) },
  Schedule: { obj: shape('TaskSchedule', { Cron: { obj: shape('TaskScheduleCron', { Start: 'str', End: 'str', Timezone: 'str' }) } }) },
});
export const groupShape = shape('TaskGroup', {
  Name: 'str',
  Count: 'int',
  Constraints: { list: constraintShape },
  Affinities: { list: affinityShape },
  Tasks: { list: taskShape },
  Spreads: { list: spreadShape },
  Volumes: {
    map: shape('VolumeRequest', {
      Name: 'str',
      Type: 'str',
      Source: 'str',
      ReadOnly: 'bool',
      Sticky: 'bool',
      AccessMode: 'str',
      AttachmentMode: 'str',
      MountOptions: { obj: shape('CSIMountOptions', { FSType: 'str', MountFlags: 'strs' }) },
      PerAlloc: 'bool',
    }),
  },
  RestartPolicy: { obj: restartShape },
  Disconnect: { obj: shape('DisconnectStrategy', { LostAfter: 'dur', StopOnClientAfter: 'dur', Replace: 'bool', Reconcile: 'str' }) },
  ReschedulePolicy: { obj: rescheduleShape },
  EphemeralDisk: { obj: shape('EphemeralDisk', { Sticky: 'bool', Migrate: 'bool', SizeMB: 'int' }) },
  Update: { obj: updateShape },
  Migrate: { obj: migrateShape },
  Networks: { list: networkShape },
  Meta: 'strMap',
  Services: { list: serviceShape },
  ShutdownDelay: 'dur',
  MaxRunDuration: 'dur',
  Scaling: { obj: scalingShape },
  Consul: { obj: consulShape },
});
export const jobShape = shape('Job', {
  Region: 'str',
  Namespace: 'str',
  ID: 'str',
  Name: 'str',
  Type: 'str',
  Priority: 'int',
  AllAtOnce: 'bool',
  Datacenters: 'strs',
  NodePool: 'str',
  Constraints: { list: constraintShape },
  Affinities: { list: affinityShape },
  TaskGroups: { list: groupShape },
  Update: { obj: updateShape },
  Multiregion: {
    obj: shape('Multiregion', {
      Strategy: { obj: shape('MultiregionStrategy', { MaxParallel: 'int', OnFailure: 'str' }) },
      Regions: { list: shape('MultiregionRegion', { Name: 'str', Count: 'int', Datacenters: 'strs', NodePool: 'str', Meta: 'strMap' }) },
    }),
  },
  Spreads: { list: spreadShape },
  Periodic: {
    obj: shape('PeriodicConfig', {
      Enabled: 'bool',
      Spec: 'str',
      Specs: 'strs',
      SpecType: 'str',
      ProhibitOverlap: 'bool',
      TimeZone: 'str',
    }),
  },
  ParameterizedJob: { obj: shape('ParameterizedJobConfig', { Payload: 'str', MetaRequired: 'strs', MetaOptional: 'strs' }) },
  Reschedule: { obj: rescheduleShape },
  Migrate: { obj: migrateShape },
  Meta: 'strMap',
  UI: { obj: shape('JobUIConfig', { Description: 'str', Links: { list: shape('JobUILink', { Label: 'str', URL: 'str' }) } }) },
});
export const registrationShape = shape('JobRegisterRequest', {
  Job: { obj: jobShape },
  Submission: { obj: shape('JobSubmission', { Source: 'str', Format: 'str', VariableFlags: 'strMap', Variables: 'str' }) },
  EnforceIndex: 'bool',
  JobModifyIndex: 'uint',
  PolicyOverride: 'bool',
  PreserveCounts: 'bool',
  PreserveResources: 'bool',
  EvalPriority: 'int',
  Region: 'str',
  Namespace: 'str',
  SecretID: 'str',
});

/** Job keys only the server sets: a generated spec must not carry them (a read-back `Stop: true` keeps a job stopped). */
export const serverOnlyJobKeys: readonly string[] = [
  'Stop',
  'ParentID',
  'Dispatched',
  'DispatchIdempotencyToken',
  'Payload',
  'ConsulNamespace',
  'VaultNamespace',
  'NomadTokenID',
  'Status',
  'StatusDescription',
  'Stable',
  'Version',
  'SubmitTime',
  'CreateIndex',
  'ModifyIndex',
  'JobModifyIndex',
  'VersionTag',
];

/** Driver `Config` keys (lower-case HCL names) svc accepts, per driver; `required` must be present. */
export const driverConfigs: Readonly<Record<string, { readonly required: string; readonly keys: readonly string[] }>> = {
  docker: {
    required: 'image',
    keys: [
      'image',
      'command',
      'args',
      'ports',
      'entrypoint',
      'work_dir',
      'network_mode',
      'labels',
      'auth',
      'volumes',
      'dns_servers',
      'force_pull',
      'image_pull_timeout',
      'privileged',
      'cap_add',
      'cap_drop',
      'init',
      'pids_limit',
      'shm_size',
      'ulimit',
    ],
  },
  raw_exec: {
    required: 'command',
    keys: ['command', 'args', 'work_dir', 'oom_score_adj', 'cgroup_v1_override', 'cgroup_v2_override', 'denied_envvars'],
  },
  exec: { required: 'command', keys: ['command', 'args', 'pid_mode', 'ipc_mode', 'cap_add', 'cap_drop', 'work_dir'] },
};
