/**
 * The parts of Nomad's JSON the driver reads or writes (hashicorp/nomad `api/jobs.go`,
 * `api/allocations.go`). The job itself comes from the injected compiler; the driver
 * only needs its ID, Meta and its groups' and tasks' names.
 */
import type { ContainerStatus, DeploymentUnit, SchedulerDriver, WorkerStatus } from '../types.js';

export interface NomadJobSpec {
  ID?: string;
  Meta?: Record<string, string> | null;
  TaskGroups: { Name: string; Count?: number; Tasks?: { Name: string; [key: string]: unknown }[]; [key: string]: unknown }[];
  [key: string]: unknown;
}

/** The job compiler (jobs/ `compileJob` bound to its context), injected. Only `Job` of its result is used. */
export type CompileUnit = (unit: DeploymentUnit) => { Job: NomadJobSpec } | Promise<{ Job: NomadJobSpec }>;

export interface AllocationStub {
  ID: string;
  Name: string;
  JobID: string;
  JobVersion: number;
  TaskGroup: string;
  DesiredStatus: string;
  ClientStatus: string;
  ClientDescription?: string;
  DeploymentStatus: { Healthy: boolean | null } | null;
  TaskStates: Record<
    string,
    { State: string; Failed: boolean; StartedAt?: string | null; Events?: { Type: string; DisplayMessage?: string }[] }
  > | null;
  CreateIndex: number;
  ModifyIndex: number;
  /** Nanoseconds since the epoch. */
  CreateTime: number;
}

export interface AllocatedPort {
  Label: string;
  Value: number;
  /** Left out when 0 (AllocatedPortMapping is omitempty; test/fixtures/agents/nomad.json). */
  To?: number;
  HostIP: string;
}

export interface Allocation extends AllocationStub {
  AllocatedResources: { Shared: { Ports: AllocatedPort[] | null } } | null;
}

/** A worker of a Nomad container: its dynamic port (`w<index>`) instead of a socket. */
export interface NomadWorkerStatus extends WorkerStatus {
  /** The port label (`w0`, `w1`…; `NOMAD_PORT_<label>` in the task). */
  readonly label: string;
  /** `host:port` the worker listens on. */
  readonly address: string;
  readonly port: number;
}

export interface NomadContainerStatus extends ContainerStatus {
  /** `<job>.<group>[<index>]`. */
  readonly allocationName: string;
  readonly clientStatus: string;
  readonly desiredStatus: string;
  readonly jobVersion: number;
  readonly workers: readonly NomadWorkerStatus[];
}

export interface AllocationLogsOptions {
  readonly stream?: 'stdout' | 'stderr';
  /** How many of the last lines (default 30). */
  readonly tail?: number;
}

export interface NomadDriver extends SchedulerDriver {
  status(key: string): readonly NomadContainerStatus[];
  /** The Nomad job ID of a unit key (see job-id.ts). */
  jobId(key: string): string;
  /**
   * Purges this installation's jobs (`Meta.svc_install` is the driver's
   * `install`) that this driver did not submit and `keep` does not claim by
   * their unit key: left by a previous leader or a svc that crashed. The
   * leader calls it once it has restored the deployments. Returns their IDs;
   * a driver without `install` purges nothing.
   */
  purgeUnknownJobs(keep?: (unitKey: string) => boolean): Promise<string[]>;
  /** Reads the unit's allocations now (status() answers from what the watcher last saw). */
  refresh(key: string): Promise<readonly NomadContainerStatus[]>;
  /**
   * The last lines of one allocation's task output (`GET /v1/client/fs/logs/:alloc`), read
   * now. Every line also reaches the driver's `logs` sink as it is printed (log-poller.ts),
   * as the local driver pushes its containers' lines.
   */
  allocationLogs(key: string, containerId: string, options?: AllocationLogsOptions): Promise<string[]>;
}
