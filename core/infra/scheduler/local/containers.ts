import { randomBytes } from 'node:crypto';
import { SvcError } from '../../../model/errors.js';
import { gpuRequestText } from '../../../model/gpus/gpu-request.js';
import type { ContainerCgroup } from '../../processes/cgroups/container-cgroup.js';
import type { SvcCgroups } from '../../processes/cgroups/svc-cgroups.js';
import { describeExit, type ProcessGroup, spawnGroup } from '../../processes/group.js';
import type { ServiceRegistry } from '../../registry/types.js';
import type {
  ContainerGpu,
  ContainerStatus,
  ContainerUsage,
  DeploymentUnit,
  ExecOutcome,
  ExecRequest,
  TerminalRequest,
  TerminalSession,
} from '../types.js';
import { execIn } from './exec.js';
import { terminalIn } from './terminal.js';
import { type Container, type ContainerLog, cgroupProcs, removeSockets, stopping } from './container.js';
import type { ForkSources } from './fork-sources.js';
import { parseFrame } from './frames.js';
import { MemoryKills } from './memory-kills.js';
import { containerArgs, runtimeEnv, workerSocketPaths } from './runtime-command.js';
import { type GpuAllocator, gpuEnv, grantText } from './gpu-allocator.js';
import type { StartSlots } from './start-slots.js';
import { WorkerSet } from './workers.js';

export interface LocalContainersOptions {
  readonly registry: ServiceRegistry;
  readonly cgroups: SvcCgroups;
  readonly forks: ForkSources;
  readonly out: ContainerLog;
  readonly socketDir: string;
  readonly startTimeoutMs: number;
  readonly stopGraceMs: number;
  readonly useZygotes: boolean;
  /** How many containers start at once; the others wait for a slot before they launch. */
  readonly startSlots: StartSlots;
  /** The machine's GPUs, which containers of workloads with `gpu` wait for (empty on a machine without). */
  readonly gpus: GpuAllocator;
  readonly onContainerExit: ((unit: DeploymentUnit, containerId: string, reason: string) => void) | undefined;
}

/** What `status()` says of a container's GPUs: held, or waited for (its workload's request), or nothing without `gpu`. */
function containerGpu(container: Container): { gpu?: ContainerGpu } {
  const request = container.unit.workload.resources.gpu;
  if (container.gpus !== undefined) return { gpu: { state: 'held', model: container.gpus.model, count: container.gpus.devices.length } };
  if (request === undefined || container.state !== 'starting') return {};
  return { gpu: { state: 'waiting', request: gpuRequestText(request) } };
}

/**
 * The local driver's containers: each one launched (forked or spawned),
 * waited on until healthy and registered, watched for an exit of its own,
 * and stopped — drained, killed after the grace, its sockets and cgroup removed.
 */
export class LocalContainers {
  private readonly containers = new Map<string, Container>();
  /** Cgroups of ended containers waiting for their last processes to go (close() waits for them). */
  private readonly removals = new Set<Promise<void>>();
  /** Containers waiting for their GPUs or a start slot: a stop aborts the wait. */
  private readonly waitingForSlot = new Map<string, AbortController>();

  constructor(private readonly options: LocalContainersOptions) {}

  get(containerId: string): Container | undefined {
    return this.containers.get(containerId);
  }

  /** The unit's containers that are starting or serving. */
  active(key: string): Container[] {
    return [...this.containers.values()].filter((c) => c.unit.key === key && c.state !== 'stopping' && c.state !== 'exited');
  }

  /** Every container of the unit, the stopping and exited too. */
  of(key: string): Container[] {
    return [...this.containers.values()].filter((c) => c.unit.key === key);
  }

  all(): Container[] {
    return [...this.containers.values()];
  }

  /** Runs a command in one of the unit's containers (exec.ts); `not_found` for an id the unit does not have. */
  exec(key: string, containerId: string, request: ExecRequest): Promise<ExecOutcome> {
    const container = this.of(key).find((c) => c.id === containerId);
    if (container === undefined) return Promise.reject(new SvcError('not_found', `no container ${containerId} in ${key}.`));
    return execIn(container, request, this.gpuEnvOf(container));
  }

  /** A program on a terminal of its own in one of the unit's containers (terminal.ts). */
  terminal(key: string, containerId: string, request: TerminalRequest): TerminalSession {
    const container = this.of(key).find((c) => c.id === containerId);
    if (container === undefined) throw new SvcError('not_found', `no container ${containerId} in ${key}.`);
    return terminalIn(container, request, this.gpuEnvOf(container));
  }

  /** The GPU variables the container's workers have: a command in it sees its GPUs, and only them. */
  private gpuEnvOf(container: Container): Record<string, string> {
    return gpuEnv(container.gpus, this.options.gpus.devices.length > 0);
  }

  /** Read from each container's cgroup now (files, not a hot path): only containers svc limits have one. */
  usage(key: string): Map<string, ContainerUsage> {
    const found = new Map<string, ContainerUsage>();
    for (const container of this.of(key)) {
      const gpus = container.gpus?.devices.length ?? 0;
      const usage = container.cgroup?.usage() ?? (gpus > 0 ? { cpuSeconds: null, memoryBytes: 0 } : null);
      if (usage !== null) found.set(container.id, gpus > 0 ? { ...usage, gpus } : usage);
    }
    return found;
  }

  status(key: string): ContainerStatus[] {
    return this.of(key).map((c) => ({
      id: c.id,
      unit: key,
      state: c.state,
      pid: c.group?.pid,
      startedAt: c.startedAt,
      healthyAt: c.healthyAt,
      startedFrom: c.startedFrom,
      workers: c.workers.status(),
      ...containerGpu(c),
    }));
  }

  /** Starts one container of the unit; resolves once it is healthy and registered, else rejects (container_failed). */
  async start(unit: DeploymentUnit): Promise<void> {
    const container = this.create(unit);
    // GPUs first: a container waiting for one holds no start slot meanwhile.
    if (!(await this.takeGpus(container))) return await this.failStart(container, undefined, 'cancelled');
    const release = await this.takeStartSlot(container);
    try {
      // A stop that came while it waited (or in the turn since) leaves nothing to launch.
      if (!release || container.state !== 'starting') return await this.failStart(container, undefined, 'cancelled');
      container.launched = this.launch(container);
      const group = (container.group = await container.launched);
      // The time-out counts from the launch: the wait for a slot is not the container's slowness.
      const outcome = group
        ? await container.workers.waitHealthy(this.options.startTimeoutMs, () => group.hasExited() || stopping(container))
        : 'cancelled';
      // A stop may have begun while the last probe was in flight: never register a stopping container.
      if (!group || outcome !== 'healthy' || container.state !== 'starting') return await this.failStart(container, group, outcome);
      await this.serve(container, group);
    } finally {
      release?.();
    }
  }

  /** The container's start slot (undefined when a stop came while it waited), said in its log when it had to wait. */
  private async takeStartSlot(container: Container): Promise<(() => void) | undefined> {
    const { startSlots, out } = this.options;
    if (startSlots.full)
      out.log(
        container,
        'system',
        `container ${container.id} waits its turn: ${startSlots.size} containers are starting on this machine, the most that start at once`,
      );
    const abort = new AbortController();
    this.waitingForSlot.set(container.id, abort);
    try {
      return await startSlots.take(abort.signal);
    } finally {
      this.waitingForSlot.delete(container.id);
    }
  }

  /**
   * The GPUs the container's workload asks for, said in its log, once free (true at once without `gpu`);
   * false when a stop came while it waited. A request the machine can never meet: gpu_unavailable.
   */
  private async takeGpus(container: Container): Promise<boolean> {
    const request = container.unit.workload.resources.gpu;
    if (request === undefined) return true;
    const { gpus, out } = this.options;
    const abort = new AbortController();
    this.waitingForSlot.set(container.id, abort);
    const ask = { request, holder: container.id, workload: container.unit.workload.name, unit: container.unit.key };
    const onWait = (holders: string[]) =>
      out.log(
        container,
        'system',
        `container ${container.id} waits for a GPU (gpu ${gpuRequestText(request)}): ${holders.length > 0 ? `held by container ${holders.join(', ')}` : 'kept for containers that asked first'}; its requests wait in the queue`,
      );
    try {
      container.gpus = await gpus.take(ask, abort.signal, onWait);
    } catch (error) {
      await this.stop(container);
      throw error;
    } finally {
      this.waitingForSlot.delete(container.id);
    }
    if (container.gpus === undefined) return false;
    out.log(container, 'system', `container ${container.id} gets ${grantText(container.gpus)}`);
    return true;
  }

  /** A container that became healthy: registered, and watched for an exit of its own. */
  private async serve(container: Container, group: ProcessGroup): Promise<void> {
    container.state = 'healthy';
    container.healthyAt = new Date();
    this.options.out.log(container, 'system', `container ${container.id} is healthy`);
    await container.workers.register();
    this.watchExit(container, group);
  }

  async stop(container: Container): Promise<void> {
    container.state = 'stopping';
    this.waitingForSlot.get(container.id)?.abort();
    await container.workers.deregister();
    const group = await container.launched;
    await group?.stop(this.options.stopGraceMs);
    container.gpus?.release();
    container.state = 'exited';
    this.containers.delete(container.id);
    removeSockets(container);
    this.removeCgroup(container);
  }

  /** For process 'exit', where nothing async runs. */
  killNow(): void {
    for (const container of this.containers.values()) container.group?.killNow();
  }

  /** Once every container is stopped: the cgroups still being removed. */
  async removed(): Promise<void> {
    await Promise.all(this.removals);
  }

  /** The container's record, its cgroup made and its workers' sockets named; nothing runs yet. */
  private create(unit: DeploymentUnit): Container {
    const { out, startTimeoutMs } = this.options;
    const id = `c-${randomBytes(5).toString('hex')}`;
    let cgroup: ContainerCgroup | undefined;
    try {
      cgroup = this.options.cgroups.create(id, { cpu: unit.workload.resources.cpu, memoryMiB: unit.workload.resources.memoryMiB });
    } catch (error) {
      throw new SvcError('container_failed', `container ${id} of ${unit.workload.name} did not start: ${(error as Error).message}.`, {
        details: { unit: unit.key, container: id, logs: [] },
      });
    }
    const socketPaths = workerSocketPaths(this.options.socketDir, id, unit.workload.scaling.workers);
    let container: Container | undefined;
    const workers = new WorkerSet({
      containerId: id,
      unit,
      socketPaths,
      registry: this.options.registry,
      log: (text) => container && out.log(container, 'system', text),
      restartTimeoutMs: startTimeoutMs,
    });
    container = {
      id,
      unit,
      workers,
      socketPaths,
      startedAt: new Date(),
      healthyAt: undefined,
      recent: [],
      state: 'starting',
      startedFrom: 'process',
      group: undefined,
      launched: Promise.resolve(undefined),
      cgroup,
      memoryKills: cgroup && new MemoryKills(cgroup),
      gpus: undefined,
    };
    this.containers.set(id, container);
    const count = `${socketPaths.length} worker${socketPaths.length === 1 ? '' : 's'}`;
    out.log(container, 'system', `starting container ${id} for ${unit.workload.name} (${count})`);
    return container;
  }

  /** Forks the container from the unit's template when it has a usable one, or from its image's zygote; else spawns it from scratch. */
  private async launch(container: Container): Promise<ProcessGroup | undefined> {
    const { unit, id } = container;
    const { out, forks } = this.options;
    // A GPU container forks too: the template never touched CUDA (it refuses to serve if it did), and the child takes its own GPUs' variables.
    if (unit.workload.scaling.checkpointEnabled) {
      const forked = await forks.forkFromTemplate(container);
      if (forked) return forked;
    }
    if (stopping(container)) return undefined;
    if (this.options.useZygotes && !unit.workload.scaling.checkpointEnabled) {
      const forked = await forks.forkFromZygote(container);
      // A stop that came meanwhile stops a forked group once launched; a failed fork is not spawned again.
      if (forked || stopping(container)) return forked;
    }
    return spawnGroup({
      command: unit.image.pythonPath,
      args: containerArgs(unit, this.options.socketDir, id, cgroupProcs(container)),
      cwd: unit.source.root,
      env: runtimeEnv(unit, gpuEnv(container.gpus, this.options.gpus.devices.length > 0)),
      onLine: (stream, text) => out.log(container, stream, text),
      onEventLine: (line) => {
        const frame = parseFrame(line);
        if (frame?.t === 'event') out.onRuntimeEvent(container, frame.event);
      },
      killRest: () => container.cgroup?.killMembers(),
    });
  }

  /** Stops a container that did not become healthy, and throws why, with its last log lines. */
  private async failStart(container: Container, group: ProcessGroup | undefined, outcome: string): Promise<never> {
    const { id, unit } = container;
    const exited = group?.hasExited() === true;
    if (exited) this.options.out.memoryKilled(container, 'a process');
    const reason = exited
      ? `exited with ${describeExit(await group!.exited)}`
      : outcome === 'timeout'
        ? `did not become healthy within ${this.options.startTimeoutMs / 1000} s`
        : 'was stopped while starting';
    await this.stop(container);
    throw new SvcError(
      'container_failed',
      `container ${id} of ${unit.workload.name} ${reason}.${container.recent.length ? `\nLast log lines:\n${container.recent.join('\n')}` : ''}`,
      {
        details: { unit: unit.key, container: id, logs: [...container.recent] },
      },
    );
  }

  /** A healthy container that exits on its own: deregistered, cleaned up, and told to onContainerExit. */
  private watchExit(container: Container, group: ProcessGroup): void {
    const { id, unit, workers } = container;
    void group.exited.then(async (exit) => {
      if (container.state === 'stopping' || container.state === 'exited') return;
      container.state = 'exited';
      container.gpus?.release();
      const memory = this.options.out.memoryKilled(container, 'a process');
      this.containers.delete(id);
      removeSockets(container);
      this.removeCgroup(container);
      await workers.deregister();
      const reason = `exited unexpectedly with ${describeExit(exit)}${memory ? ` (killed for going past ${container.memoryKills!.limit})` : ''}`;
      this.options.out.log(container, 'system', `container ${id} ${reason}`);
      this.options.onContainerExit?.(unit, id, reason);
    });
  }

  /** In the background: a stop does not wait for the kernel to let go of the cgroup. */
  private removeCgroup(container: Container): void {
    const { cgroup } = container;
    if (!cgroup) return;
    const removal = cgroup.remove().then((removed) => {
      this.removals.delete(removal);
      if (!removed)
        this.options.out.log(
          container,
          'system',
          `the cgroup of container ${container.id} still holds processes; it is removed when svc starts next`,
        );
    });
    this.removals.add(removal);
  }
}
