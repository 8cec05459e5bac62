/**
 * The Nomad JSON API shapes svc emits (hashicorp/nomad `api/jobs.go`,
 * `api/tasks.go`, `api/resources.go`, `api/services.go`, `api/scaling.go`):
 * keys are the Go field names, durations are integers in nanoseconds.
 * Only the fields svc (or a `transformJob` plugin) may send are typed here;
 * jobs/schema.ts holds the complete whitelists the validator checks.
 */

/** A Go `time.Duration` in JSON: an integer number of nanoseconds (strings are a 400). */
export type Duration = number;

/** What `PUT /v1/jobs` takes (`api.JobRegisterRequest`). */
export interface NomadJobRegistration {
  Job: NomadJob;
  EnforceIndex?: boolean;
  JobModifyIndex?: number;
  PolicyOverride?: boolean;
  /** Keep the current group counts on update (redeploys keep autoscaled counts). */
  PreserveCounts?: boolean;
  PreserveResources?: boolean;
  EvalPriority?: number;
  Region?: string;
  Namespace?: string;
}

export interface NomadJob {
  ID: string;
  Name?: string;
  Type?: 'service' | 'batch' | 'system' | 'sysbatch';
  Region?: string;
  Namespace?: string;
  Priority?: number;
  AllAtOnce?: boolean;
  Datacenters?: string[];
  NodePool?: string;
  Constraints?: Constraint[];
  Affinities?: Affinity[];
  Spreads?: Spread[];
  TaskGroups: TaskGroup[];
  Update?: UpdateStrategy;
  Reschedule?: ReschedulePolicy;
  Migrate?: MigrateStrategy;
  Meta?: Record<string, string>;
  UI?: JobUIConfig;
  /** Batch jobs only: Nomad launches a child job per tick (jobs/periodic.ts). */
  Periodic?: PeriodicConfig;
}

/** `api.PeriodicConfig`: `Spec` (or `Specs`) in Nomad's cron syntax, read in `TimeZone`. */
export interface PeriodicConfig {
  Enabled?: boolean;
  Spec?: string;
  Specs?: string[];
  SpecType?: 'cron';
  ProhibitOverlap?: boolean;
  TimeZone?: string;
}

export interface JobUIConfig {
  /** Markdown, at most 1000 characters. */
  Description?: string;
  Links?: { Label: string; URL: string }[];
}

export interface Constraint {
  LTarget?: string;
  RTarget?: string;
  Operand?: string;
}

export interface Affinity extends Constraint {
  /** −100..100. */
  Weight?: number;
}

export interface Spread {
  Attribute?: string;
  Weight?: number;
  SpreadTarget?: { Value: string; Percent: number }[];
}

export interface UpdateStrategy {
  Stagger?: Duration;
  /** 0: no deployments, so scaling is never blocked by one. */
  MaxParallel?: number;
  HealthCheck?: 'checks' | 'task_states' | 'manual';
  MinHealthyTime?: Duration;
  HealthyDeadline?: Duration;
  ProgressDeadline?: Duration;
  Canary?: number;
  AutoRevert?: boolean;
  AutoPromote?: boolean;
}

export interface MigrateStrategy {
  MaxParallel?: number;
  HealthCheck?: string;
  MinHealthyTime?: Duration;
  HealthyDeadline?: Duration;
}

export interface RestartPolicy {
  Interval?: Duration;
  Attempts?: number;
  Delay?: Duration;
  Mode?: 'delay' | 'fail';
  RenderTemplates?: boolean;
}

export interface ReschedulePolicy {
  Attempts?: number;
  Interval?: Duration;
  Delay?: Duration;
  DelayFunction?: 'constant' | 'exponential' | 'fibonacci';
  MaxDelay?: Duration;
  Unlimited?: boolean;
}

export interface EphemeralDisk {
  Sticky?: boolean;
  Migrate?: boolean;
  SizeMB?: number;
}

export interface Port {
  Label: string;
  /** 0 for a dynamic port. */
  Value?: number;
  To?: number;
  HostNetwork?: string;
}

export interface NetworkResource {
  Mode?: string;
  DynamicPorts?: Port[];
  ReservedPorts?: Port[];
}

export interface ScalingPolicy {
  Min?: number;
  /** Required by Nomad. */
  Max: number;
  Enabled?: boolean;
  Type?: 'horizontal';
  Policy?: Record<string, unknown>;
}

export interface TaskGroup {
  Name: string;
  Count?: number;
  Constraints?: Constraint[];
  Affinities?: Affinity[];
  Spreads?: Spread[];
  Tasks: Task[];
  RestartPolicy?: RestartPolicy;
  ReschedulePolicy?: ReschedulePolicy;
  EphemeralDisk?: EphemeralDisk;
  Update?: UpdateStrategy;
  Migrate?: MigrateStrategy;
  Networks?: NetworkResource[];
  Meta?: Record<string, string>;
  Services?: Service[];
  ShutdownDelay?: Duration;
  Scaling?: ScalingPolicy;
  /** The volumes its tasks mount, by the name their `VolumeMounts` use. */
  Volumes?: Record<string, VolumeRequest>;
}

/** A group's `volume` block (`structs.VolumeRequest`): here, a dynamic host volume svc registered. */
export interface VolumeRequest {
  Name: string;
  Type: 'host' | 'csi';
  Source: string;
  ReadOnly?: boolean;
  AccessMode?: string;
  AttachmentMode?: string;
}

/** A task's `volume_mount` block: the group's volume `Volume` at `Destination` in the task. */
export interface VolumeMount {
  Volume: string;
  Destination: string;
  ReadOnly?: boolean;
}

export type Driver = 'docker' | 'raw_exec' | 'exec';

export interface Task {
  Name: string;
  Driver: Driver;
  User?: string;
  /** Per driver, lower-case HCL attribute names (`image`, `command`, `args`, `ports`…). */
  Config: Record<string, unknown>;
  Constraints?: Constraint[];
  Affinities?: Affinity[];
  Env?: Record<string, string>;
  Services?: Service[];
  Resources?: Resources;
  RestartPolicy?: RestartPolicy;
  Meta?: Record<string, string>;
  KillTimeout?: Duration;
  LogConfig?: LogConfig;
  Artifacts?: TaskArtifact[];
  ShutdownDelay?: Duration;
  KillSignal?: string;
  Templates?: Template[];
  VolumeMounts?: VolumeMount[];
}

/** `template` blocks (`structs.Template`): rendered by the Nomad client before the task starts. */
export interface Template {
  EmbeddedTmpl?: string;
  SourcePath?: string;
  DestPath: string;
  /** Read the rendered file as `KEY=value` lines into the task's environment. */
  Envvars?: boolean;
  Perms?: string;
  ChangeMode?: 'noop' | 'restart' | 'signal' | 'script';
  ChangeSignal?: string;
}

export interface Resources {
  /** MHz; exclusive with Cores. */
  CPU?: number;
  /** Whole reserved cores; exclusive with CPU. */
  Cores?: number;
  /** Nomad's "MB" are MiB. */
  MemoryMB?: number;
  MemoryMaxMB?: number;
  /** Devices from the clients' device plugins: svc asks for `nvidia/gpu` (jobs/gpu-devices.ts). */
  Devices?: RequestedDevice[];
}

/** One `device` block (`structs.RequestedDevice`): `Name` is `type`, `vendor/type` or `vendor/type/name`. */
export interface RequestedDevice {
  Name: string;
  Count: number;
  Constraints?: Constraint[];
  Affinities?: Affinity[];
}

export interface LogConfig {
  MaxFiles?: number;
  MaxFileSizeMB?: number;
  Disabled?: boolean;
}

export interface TaskArtifact {
  GetterSource: string;
  GetterOptions?: Record<string, string>;
  GetterHeaders?: Record<string, string>;
  GetterMode?: 'any' | 'file' | 'dir';
  RelativeDest?: string;
}

export interface Service {
  Name: string;
  Tags?: string[];
  CanaryTags?: string[];
  PortLabel?: string;
  AddressMode?: 'auto' | 'host' | 'driver' | 'alloc' | 'alloc_ipv6';
  Checks?: ServiceCheck[];
  Meta?: Record<string, string>;
  Provider?: 'consul' | 'nomad';
  OnUpdate?: 'require_healthy' | 'ignore_warnings' | 'ignore';
}

export interface ServiceCheck {
  Name?: string;
  Type: 'http' | 'tcp' | 'grpc' | 'script';
  Path?: string;
  Protocol?: 'http' | 'https';
  PortLabel?: string;
  Method?: string;
  Interval: Duration;
  Timeout: Duration;
  InitialStatus?: 'passing' | 'warning' | 'critical' | '';
  CheckRestart?: CheckRestart;
  SuccessBeforePassing?: number;
  FailuresBeforeCritical?: number;
  /** Whether the check decides an allocation's health during a deployment (`ignore`: it does not). */
  OnUpdate?: 'require_healthy' | 'ignore_warnings' | 'ignore';
}

export interface CheckRestart {
  Limit?: number;
  Grace?: Duration;
  IgnoreWarnings?: boolean;
}

/** One problem found by `validateJob`: `path` like `Job.TaskGroups[0].Tasks[0].Resources.MemoryMB`. */
export interface JobIssue {
  readonly path: string;
  readonly message: string;
}
