/**
 * The scheduler driver: runs the containers of deployment units. The local
 * driver runs each container as a process group on this machine; the Nomad
 * driver (later) compiles each unit into a Nomad job. The gateway learns about
 * healthy containers through the registry; of a driver it only asks why a
 * worker died with requests in hand (`crashCause`).
 */
import type { DeploymentRef } from '../../model/deployment-keys.js';
import type { SvcError } from '../../model/errors.js';
import type { BuiltImage } from '../images/types.js';
import type { Instance } from '../registry/types.js';
import type { Enforcement } from '../processes/cgroups/types.js';
import type { Workload } from '../../model/workload/types.js';

/** Where a unit's code comes from. The embedded default runs it from the project folder. */
export interface SourceRef {
  readonly root: string;
  /** The module to import (`app`, `pkg.app`). */
  readonly entry: string;
  /** The stored code bundle `root` was extracted from; absent for a project folder (`svc serve`). Nomad tasks download it. */
  readonly bundleSha256?: string;
}

/** One workload of one deployment, as the driver runs it. */
export interface DeploymentUnit {
  readonly key: string;
  readonly ref: DeploymentRef;
  readonly workload: Workload;
  readonly image: BuiltImage;
  readonly source: SourceRef;
  /**
   * The variables of the workload's secrets (`workload.secrets`), opened for this unit only:
   * the local driver puts them in its workers' environment, the Nomad driver into a Nomad
   * Variable the job's template reads. Kept in memory, never written anywhere by svc.
   */
  readonly secretEnv?: Readonly<Record<string, string>>;
  /** The volumes its containers mount (`workload.volumes`), each with the folder of its files on this host. */
  readonly mounts?: readonly UnitMount[];
}

/** A volume as a unit's containers mount it: `source` (a host folder, or on Nomad with a CSI plugin the CSI volume's ID) seen at `path`. */
export interface UnitMount {
  readonly path: string;
  /** The volume's name, which the Nomad driver's host volume is named after. */
  readonly volume: string;
  readonly source: string;
  readonly readOnly: boolean;
}

export type ContainerState = 'starting' | 'healthy' | 'stopping' | 'exited';

/** One worker process of a container; each is its own registry instance. */
export interface WorkerStatus {
  readonly index: number;
  /** The worker's current process; undefined while it is down. */
  readonly pid: number | undefined;
  /** `<container>-w<index>`. */
  readonly instanceId: string;
  readonly socketPath: string;
  readonly registered: boolean;
}

export interface ContainerStatus {
  readonly id: string;
  readonly unit: string;
  readonly state: ContainerState;
  /** The container's main process, which supervises the workers and leads its process group. */
  readonly pid: number | undefined;
  readonly startedAt: Date;
  /** When it passed its health check (before it was registered); undefined until then. */
  readonly healthyAt: Date | undefined;
  /** `template`: forked from the unit's checkpoint template; `process`: started from scratch. */
  readonly startedFrom: 'template' | 'process';
  readonly workers: readonly WorkerStatus[];
  /** The GPUs it holds, or waits for (absent: its workload asks for none, or the driver does not hand GPUs out itself). */
  readonly gpu?: ContainerGpu;
}

/** A container's GPUs: those it holds (`L4`, 1), or the request it waits for (`any`, `H100 ×2`). */
export type ContainerGpu =
  | { readonly state: 'held'; readonly model: string; readonly count: number }
  | { readonly state: 'waiting'; readonly request: string };

/** One model of the machine's GPUs now: how many are free and busy, and which containers hold the busy ones. */
export interface GpuModelState {
  readonly model: string;
  readonly free: number;
  readonly busy: number;
  readonly holders: readonly string[];
}

/** A container waiting for GPUs, in the order they are given out. */
export interface GpuWaiter {
  readonly container: string;
  /** Its deployment unit's key. */
  readonly unit: string;
  /** What it asks (`any`, `H100 | A100 ×2`). */
  readonly request: string;
  /** The models of this machine it may take, in its order of preference. */
  readonly models: readonly string[];
}

/** The GPUs a driver hands out itself (the embedded default): by model, and who waits, first first. */
export interface GpuState {
  readonly models: readonly GpuModelState[];
  readonly waiting: readonly GpuWaiter[];
  /** UUID → the container holding it. */
  readonly held: ReadonlyMap<string, string>;
}

/** The most of each stream an exec keeps: enough for `ps`, `ls`, `pip list`; the rest is cut, and said so. */
export const EXEC_OUTPUT_BYTES = 1024 * 1024;

/** The most words a command to run in a container may have, and characters in each (exec and terminals alike). */
export const COMMAND_WORDS = { max: 256, maxChars: 4096 } as const;

/** A command to run inside a container: its argv, and how long it may run. */
export interface ExecRequest {
  readonly argv: readonly string[];
  readonly timeoutMs: number;
}

/** How it ended, and what it wrote (each stream kept up to a bound). */
export interface ExecOutcome {
  /** null when a signal ended it. */
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  /** Some output was cut at the bound. */
  readonly truncated: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

/** The rows and columns a terminal may have: the server refuses others, the CLI fits a window into them. */
export const TERMINAL_SIZE = { min: 1, max: 1000 } as const;

/** A program to run on a terminal of its own inside a container (`svc shell`): its argv (empty: a shell) and the terminal's size. */

export interface TerminalRequest {
  readonly argv: readonly string[];
  readonly rows: number;
  readonly cols: number;
  /** The client's `TERM`, so that programs draw for its terminal. */
  readonly term: string;
}

/** A program running on a terminal: bytes both ways, resizes, and how it ended. */
export interface TerminalSession {
  /** What the terminal shows, as it comes. */
  readonly output: NodeJS.ReadableStream;
  /** Keys typed (bytes, as the client's terminal sends them). */
  write(data: Buffer): void;
  resize(rows: number, cols: number): void;
  /** The client went away: the program's session gets SIGHUP, as when a terminal window closes. */
  hangUp(): void;
  /** Settles once the program ended: its exit code (128 + the signal when one ended it). */
  readonly exited: Promise<number>;
}

/** What a container uses: CPU seconds so far (null when nothing accounts them) and memory held now. */
export interface ContainerUsage {
  readonly cpuSeconds: number | null;
  readonly memoryBytes: number;
  /** GPUs it holds now (absent: none). */
  readonly gpus?: number;
}

export interface LogLine {
  readonly unit: string;
  readonly container: string;
  readonly stream: 'stdout' | 'stderr' | 'system';
  readonly text: string;
  readonly time: Date;
}

export type LogSink = (line: LogLine) => void;

/** What a scheduler would do with a unit if it were submitted and started now (a dry run). */
export interface UnitPlan {
  /** The scheduler's name for it (the Nomad job ID). */
  readonly id: string;
  /** `create`: a new job; `update`: the job exists and would change; `none`: it would not change. */
  readonly change: 'create' | 'update' | 'none';
  /** What the scheduler would do with its instances, by action (Nomad: `place`, `stop`, `inPlaceUpdate`, `destructiveUpdate`…), zeros left out. */
  readonly placements: Readonly<Record<string, number>>;
  /** Placements the scheduler could not make, with its reasons (no eligible node, a dimension exhausted). */
  readonly failures: readonly string[];
  readonly warnings: readonly string[];
}

export interface SchedulerDriver {
  readonly name: string;
  /**
   * Whether containers are held to their workload's `cpu` and `memory`, and
   * why not. Absent: the scheduler enforces them itself (Nomad's task resources).
   */
  readonly resourceLimits?: Enforcement;
  /**
   * Why the worker behind a registry instance died with requests in hand,
   * when the driver knows better than a broken connection does (killed for
   * memory: `memory_limit_exceeded`); undefined otherwise. Synchronous: it
   * runs on the proxy's error path.
   */
  crashCause?(instance: Instance): SvcError | undefined;
  /**
   * Asks the scheduler what submitting the unit would do, changing nothing
   * (Nomad's plan endpoint). Absent for the local driver: there is nothing to plan.
   */
  plan?(unit: DeploymentUnit): Promise<UnitPlan>;
  /**
   * The unit's scaling bounds changed while it runs (`svc deployment scale`): a driver that compiled them
   * into its scheduler's job registers it again; absent: nothing to do (the autoscaler applies them).
   */
  rescale?(unit: DeploymentUnit): Promise<void>;
  /** The machine's GPUs and who holds and waits for them, read now; absent: the driver hands out no GPUs itself (Nomad's device plugin does). */
  gpus?(): GpuState;
  /** What each container of the unit uses now, by id (read when asked: `svc container list`); absent: the driver cannot tell. */
  usage?(key: string): ReadonlyMap<string, ContainerUsage>;
  /** Runs a command inside a running container of the unit (`svc container exec`); absent: the driver cannot. */
  exec?(key: string, containerId: string, request: ExecRequest): Promise<ExecOutcome>;
  /** Runs a program on a terminal of its own inside a running container of the unit (`svc shell`); absent: the driver cannot. */
  terminal?(key: string, containerId: string, request: TerminalRequest): TerminalSession;
  /**
   * Creates or replaces the unit's definition. Starts nothing by itself, but
   * for the floor a scheduler keeps: a new Nomad job starts at min_containers
   * (Nomad requires `Count` ≥ `Scaling.Min`; a redeploy keeps the job's count).
   */
  submit(unit: DeploymentUnit): Promise<void>;
  /**
   * Sets the number of containers, counting those still starting. Resolves
   * once the new containers are healthy and registered; rejects with
   * `container_failed` (and the last log lines) when one exits or does not
   * become healthy in time. Containers it adds appear in `status()` (state
   * `starting`) before it returns to the event loop, so that two calls in a
   * row never start the same container twice. Scaling down stops arbitrary
   * containers: the autoscaler uses `stop()` to choose.
   */
  scale(key: string, count: number): Promise<void>;
  /**
   * Stops exactly one container of the unit (the autoscaler's choice: the
   * least recently used idle one), which lowers the unit's count by one.
   * The caller drains it first; the container is deregistered at once and
   * then stopped (SIGTERM, SIGKILL after a grace period locally; an
   * allocation stop and a count decrement on Nomad). Resolves when it has
   * exited; an unknown or already stopped id resolves at once (idempotent).
   */
  stop(key: string, containerId: string): Promise<void>;
  /** Stops every container of the unit and forgets it. Idempotent. */
  remove(key: string): Promise<void>;
  status(key: string): readonly ContainerStatus[];
  /** Stops everything this driver started. */
  close(): Promise<void>;
}
