import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { SvcError } from '../../../model/errors.js';
import type { ContainerCgroup } from '../../processes/cgroups/container-cgroup.js';
import { openSvcCgroups } from '../../processes/cgroups/svc-cgroups.js';
import { describeExit, spawnGroup, type ProcessGroup } from '../../processes/group.js';
import type { ServiceRegistry } from '../../registry/types.js';
import type { ContainerStatus, DeploymentUnit, LogLine, LogSink, SchedulerDriver } from '../types.js';
import { parseFrame, type RuntimeEvent } from './frames.js';
import { MemoryKills } from './memory-kills.js';
import { containerArgs, runtimeEnv, workerSocketPaths } from './runtime-command.js';
import { makeSocketDir } from './socket-dir.js';
import { CheckpointTemplate, type TemplateState } from './template.js';
import { WorkerSet } from './workers.js';
import { Zygote } from './zygote.js';

export interface LocalDriverOptions {
  readonly registry: ServiceRegistry;
  readonly logs: LogSink;
  /** How long a container may take to answer its health route (and a template its imports and on_start). */
  readonly startTimeoutMs?: number;
  /** How long a stopping container may drain before it is killed. */
  readonly stopGraceMs?: number;
  /** Called when a healthy container exits on its own (the autoscaler replaces it; events). */
  readonly onContainerExit?: (unit: DeploymentUnit, containerId: string, reason: string) => void;
  /**
   * Fork containers without a checkpoint from a zygote of their image (one
   * warmed process per image, started once a container of it is healthy)
   * instead of spawning a new interpreter each. Default off; the platform turns it on (unless SVC_ZYGOTES=0).
   */
  readonly zygotes?: boolean;
  /**
   * Only cgroup filesystems mounted at or below this folder hold the
   * containers' cgroups; null (default): any in /proc/self/mountinfo.
   */
  readonly cgroupRoot?: string | null;
}

interface Container {
  readonly id: string;
  readonly unit: DeploymentUnit;
  readonly workers: WorkerSet;
  readonly socketPaths: readonly string[];
  readonly startedAt: Date;
  healthyAt: Date | undefined;
  readonly recent: string[];
  state: ContainerStatus['state'];
  startedFrom: ContainerStatus['startedFrom'];
  group: ProcessGroup | undefined;
  /** The process group, once launched; undefined when a stop came first. */
  launched: Promise<ProcessGroup | undefined>;
  /** Its cgroup (cpu and memory limits), when they are enforced here. */
  readonly cgroup: ContainerCgroup | undefined;
  readonly memoryKills: MemoryKills | undefined;
}

export interface TemplateStatus {
  readonly id: string;
  readonly pid: number | undefined;
  readonly state: TemplateState;
}

/**
 * The embedded driver: each container is a `python -m svc.runtime` process
 * group — a supervisor and its workers, each worker on its own Unix socket
 * in a private folder. A unit with `checkpoint_enabled` gets a template
 * process that ran imports and on_start once; its containers are forked
 * from it, or started from scratch when it cannot serve (said in the logs).
 * With zygotes (the platform's default), the other containers fork from
 * a zygote of their image — a process that imported the runtime once —
 * and import the user's code fresh; the image's first container, and any
 * the zygote cannot start, are spawned as new processes.
 */
export interface LocalDriver extends SchedulerDriver {
  /** This driver's private socket folder; every container's command line names it. */
  readonly socketDir: string;
  /** The unit's checkpoint template, when it has one. */
  template(key: string): TemplateStatus | undefined;
  /** The zygote of the image whose interpreter is `pythonPath`, when it has one. */
  zygote(pythonPath: string): TemplateStatus | undefined;
  /** A running container's cgroup, when limits are enforced here. */
  cgroup(containerId: string): ContainerCgroup | undefined;
}

/** Unit key under which zygotes log: they serve every unit of their image. */
export const ZYGOTE_LOG_UNIT = 'zygote';

const RECENT_LINES = 30;
const FORK_TIMEOUT_MS = 10_000;

export function createLocalDriver(options: LocalDriverOptions): LocalDriver {
  const units = new Map<string, DeploymentUnit>();
  const containers = new Map<string, Container>();
  const templates = new Map<string, CheckpointTemplate>();
  const zygotes = new Map<string, Zygote>();
  /** Interpreters whose zygote never became ready: their containers are spawned, as without zygotes. */
  const noZygote = new Set<string>();
  const useZygotes = options.zygotes ?? false;
  let closed = false;
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const stopGraceMs = options.stopGraceMs ?? 5_000;
  const socketDir = makeSocketDir();
  const cgroups = openSvcCgroups({ under: options.cgroupRoot ?? null });
  /** Cgroups of ended containers waiting for their last processes to go (close() waits for them). */
  const removals = new Set<Promise<void>>();

  // Nothing async runs during 'exit': kill synchronously. The lifelines cover SIGKILL of Node.
  const killAll = () => {
    for (const container of containers.values()) container.group?.killNow();
    for (const template of templates.values()) template.killNow();
    for (const zygote of zygotes.values()) zygote.killNow();
  };
  process.on('exit', killAll);

  function emit(unit: string, container: string, stream: LogLine['stream'], text: string): void {
    options.logs({ unit, container, stream, text, time: new Date() });
  }

  function log(container: Container, stream: LogLine['stream'], text: string): void {
    container.recent.push(text);
    if (container.recent.length > RECENT_LINES) container.recent.shift();
    emit(container.unit.key, container.id, stream, text);
  }

  /** The runtime's events of a container: a worker's death is checked against the memory limit first. */
  function onRuntimeEvent(container: Container, event: RuntimeEvent): void {
    if (event.event === 'worker_exited') memoryKilled(container, `worker ${event.worker}`, event.worker);
    else if (event.event === 'listening') container.memoryKills?.replaced(event.worker);
    container.workers.onEvent(event);
  }

  /** After a process of the container exited: whether the kernel killed it for memory (said in the logs). */
  function memoryKilled(container: Container, who: string, worker?: number): boolean {
    const kills = container.memoryKills;
    if (!kills?.sinceLastLook(worker)) return false;
    log(
      container,
      'system',
      `${who} of container ${container.id} was killed by the kernel: the container went past its memory limit (${kills.limit})`,
    );
    return true;
  }

  function templateFor(unit: DeploymentUnit): CheckpointTemplate {
    const existing = templates.get(unit.key);
    if (existing?.unit === unit) return existing;
    const template = new CheckpointTemplate({
      unit,
      socketDir,
      startTimeoutMs,
      log: (id, stream, text) => emit(unit.key, id, stream, text),
    });
    templates.set(unit.key, template);
    return template;
  }

  /** Starts the zygote of the unit's image unless it has one (or had one that never became ready). */
  function ensureZygote(unit: DeploymentUnit): void {
    const pythonPath = unit.image.pythonPath;
    const existing = zygotes.get(pythonPath);
    if (closed || noZygote.has(pythonPath) || (existing && (existing.state === 'starting' || existing.state === 'ready'))) return;
    const zygote = new Zygote({
      pythonPath,
      socketDir,
      startTimeoutMs,
      log: (id, stream, text) => emit(ZYGOTE_LOG_UNIT, id, stream, text),
    });
    zygotes.set(pythonPath, zygote);
    void zygote.ready.then((ready) => {
      if (ready !== true && zygote.state === 'failed') noZygote.add(pythonPath);
    });
  }

  /** Forks the container from its image's zygote when one is ready; undefined when it cannot (then it is spawned). */
  async function forkFromZygote(container: Container): Promise<ProcessGroup | undefined> {
    const { unit, id } = container;
    const zygote = zygotes.get(unit.image.pythonPath);
    if (!zygote || zygote.unusable() !== null) return undefined;
    try {
      const group = await zygote.fork({
        container: id,
        unit,
        workers: unit.workload.scaling.workers,
        cgroup: cgroupProcs(container),
        onLine: (stream, text) => log(container, stream, text),
        onEvent: (event) => onRuntimeEvent(container, event),
        timeoutMs: Math.min(startTimeoutMs, FORK_TIMEOUT_MS),
      });
      log(container, 'system', `container ${id} forked from zygote ${zygote.id} (pid ${group.pid})`);
      return group;
    } catch (error) {
      log(
        container,
        'system',
        `zygote ${zygote.id} could not start container ${id} (${(error as Error).message}); starting it as a new process`,
      );
      return undefined;
    }
  }

  async function stopTemplate(key: string): Promise<void> {
    const template = templates.get(key);
    templates.delete(key);
    await template?.stop(stopGraceMs);
  }

  /** Forks the container from the unit's template when it has a usable one; else spawns it from scratch. */
  async function launch(container: Container): Promise<ProcessGroup | undefined> {
    const { unit, id } = container;
    const onEvent = (line: string) => {
      const frame = parseFrame(line);
      if (frame?.t === 'event') onRuntimeEvent(container, frame.event);
    };
    if (unit.workload.scaling.checkpointEnabled) {
      const template = templateFor(unit);
      const ready = await template.ready;
      if (container.state === 'stopping') return undefined;
      const why = ready === true ? template.unusable() : ready;
      if (why === null) {
        try {
          const group = await template.fork({
            container: id,
            workers: unit.workload.scaling.workers,
            cgroup: cgroupProcs(container),
            onLine: (stream, text) => log(container, stream, text),
            onEvent: (event) => onRuntimeEvent(container, event),
            timeoutMs: Math.min(startTimeoutMs, FORK_TIMEOUT_MS),
          });
          container.startedFrom = 'template';
          log(container, 'system', `container ${id} forked from checkpoint template ${template.id} (pid ${group.pid})`);
          return group;
        } catch (error) {
          log(
            container,
            'system',
            `checkpoint template ${template.id} could not start container ${id} (${(error as Error).message}); starting it without the checkpoint`,
          );
        }
      } else {
        log(
          container,
          'system',
          `checkpoint template of ${unit.workload.name} cannot be used (${why}); starting container ${id} without it: imports and on_start run in it`,
        );
      }
    }
    if (container.state === 'stopping') return undefined;
    if (useZygotes && !unit.workload.scaling.checkpointEnabled) {
      const forked = await forkFromZygote(container);
      // A stop that came meanwhile stops a forked group once launched; a failed fork is not spawned again.
      if (forked || stopping(container)) return forked;
    }
    return spawnGroup({
      command: unit.image.pythonPath,
      args: containerArgs(unit, socketDir, id, cgroupProcs(container)),
      cwd: unit.source.root,
      env: runtimeEnv(unit),
      onLine: (stream, text) => log(container, stream, text),
      onEventLine: onEvent,
      killRest: () => container.cgroup?.killMembers(),
    });
  }

  async function startContainer(unit: DeploymentUnit): Promise<void> {
    const id = `c-${randomBytes(5).toString('hex')}`;
    let cgroup: ContainerCgroup | undefined;
    try {
      cgroup = cgroups.create(id, { cpu: unit.workload.resources.cpu, memoryMiB: unit.workload.resources.memoryMiB });
    } catch (error) {
      throw new SvcError('container_failed', `container ${id} of ${unit.workload.name} did not start: ${(error as Error).message}.`, {
        details: { unit: unit.key, container: id, logs: [] },
      });
    }
    const socketPaths = workerSocketPaths(socketDir, id, unit.workload.scaling.workers);
    let container: Container | undefined;
    const workers = new WorkerSet({
      containerId: id,
      unit,
      socketPaths,
      registry: options.registry,
      log: (text) => container && log(container, 'system', text),
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
    };
    containers.set(id, container);
    log(
      container,
      'system',
      `starting container ${id} for ${unit.workload.name} (${socketPaths.length} worker${socketPaths.length === 1 ? '' : 's'})`,
    );
    container.launched = launch(container);
    const group = (container.group = await container.launched);

    const outcome = group
      ? await workers.waitHealthy(startTimeoutMs, () => group.hasExited() || container!.state === 'stopping')
      : 'cancelled';
    // A stop may have begun while the last probe was in flight: never register a stopping container.
    if (!group || outcome !== 'healthy' || container.state !== 'starting') {
      const exited = group?.hasExited() === true;
      if (exited) memoryKilled(container, 'a process');
      const reason = exited
        ? `exited with ${describeExit(await group!.exited)}`
        : outcome === 'timeout'
          ? `did not become healthy within ${startTimeoutMs / 1000} s`
          : 'was stopped while starting';
      await stopContainer(container);
      throw new SvcError(
        'container_failed',
        `container ${id} of ${unit.workload.name} ${reason}.${container.recent.length ? `\nLast log lines:\n${container.recent.join('\n')}` : ''}`,
        {
          details: { unit: unit.key, container: id, logs: [...container.recent] },
        },
      );
    }
    container.state = 'healthy';
    container.healthyAt = new Date();
    log(container, 'system', `container ${id} is healthy`);
    await workers.register();
    // Once the image has proved it can serve: its next containers fork from its zygote.
    if (useZygotes && !unit.workload.scaling.checkpointEnabled) ensureZygote(unit);
    void group.exited.then(async (exit) => {
      if (container!.state === 'stopping' || container!.state === 'exited') return;
      container!.state = 'exited';
      const memory = memoryKilled(container!, 'a process');
      containers.delete(id);
      removeSockets(container!);
      removeCgroup(container!);
      await workers.deregister();
      const reason = `exited unexpectedly with ${describeExit(exit)}${memory ? ` (killed for going past ${container!.memoryKills!.limit})` : ''}`;
      log(container!, 'system', `container ${id} ${reason}`);
      options.onContainerExit?.(unit, id, reason);
    });
  }

  async function stopContainer(container: Container): Promise<void> {
    container.state = 'stopping';
    await container.workers.deregister();
    const group = await container.launched;
    await group?.stop(stopGraceMs);
    container.state = 'exited';
    containers.delete(container.id);
    removeSockets(container);
    removeCgroup(container);
  }

  /** In the background: a stop does not wait for the kernel to let go of the cgroup. */
  function removeCgroup(container: Container): void {
    const { cgroup } = container;
    if (!cgroup) return;
    const removal = cgroup.remove().then((removed) => {
      removals.delete(removal);
      if (!removed)
        log(container, 'system', `the cgroup of container ${container.id} still holds processes; it is removed when svc starts next`);
    });
    removals.add(removal);
  }

  function containersOf(key: string): Container[] {
    return [...containers.values()].filter((c) => c.unit.key === key && c.state !== 'stopping' && c.state !== 'exited');
  }

  return {
    name: 'local',
    socketDir,
    resourceLimits: cgroups.enforcement,
    crashCause(instance) {
      const { container, worker } = instance.meta;
      return container === undefined ? undefined : containers.get(container)?.memoryKills?.explain(Number(worker));
    },
    cgroup: (containerId) => containers.get(containerId)?.cgroup,
    async submit(unit) {
      const previous = units.get(unit.key);
      units.set(unit.key, unit);
      // A new version of the unit needs a new template: the old one holds the old code and on_start.
      if (previous && previous !== unit) await stopTemplate(unit.key);
    },
    async scale(key, count) {
      const unit = units.get(key);
      if (!unit) throw new SvcError('not_found', `no deployment unit ${key}`);
      const current = containersOf(key);
      if (current.length > count) {
        await Promise.all(current.slice(count).map(stopContainer));
        return;
      }
      const starts = Array.from({ length: count - current.length }, () => startContainer(unit));
      const results = await Promise.allSettled(starts);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
    async stop(key, containerId) {
      const container = containers.get(containerId);
      if (!container || container.unit.key !== key || container.state === 'stopping' || container.state === 'exited') return;
      await stopContainer(container);
    },
    async remove(key) {
      units.delete(key);
      // Together: a container still waiting for the template's on_start gives up once the template stops.
      await Promise.all([...[...containers.values()].filter((c) => c.unit.key === key).map(stopContainer), stopTemplate(key)]);
    },
    status(key) {
      return [...containers.values()]
        .filter((c) => c.unit.key === key)
        .map((c) => ({
          id: c.id,
          unit: key,
          state: c.state,
          pid: c.group?.pid,
          startedAt: c.startedAt,
          healthyAt: c.healthyAt,
          startedFrom: c.startedFrom,
          workers: c.workers.status(),
        }));
    },
    template(key) {
      const template = templates.get(key);
      return template && { id: template.id, pid: template.pid, state: template.state };
    },
    zygote(pythonPath) {
      const zygote = zygotes.get(pythonPath);
      return zygote && { id: zygote.id, pid: zygote.pid, state: zygote.state };
    },
    async close() {
      closed = true;
      const stoppingZygotes = [...zygotes.values()].map((zygote) => zygote.stop(stopGraceMs));
      zygotes.clear();
      await Promise.all([...[...containers.values()].map(stopContainer), ...[...templates.keys()].map(stopTemplate), ...stoppingZygotes]);
      units.clear();
      await Promise.all(removals);
      cgroups.close();
      process.off('exit', killAll);
      rmSync(socketDir, { recursive: true, force: true });
    },
  };
}

/** Read through a call: a stop may begin while a launch awaits, which narrowing cannot know. */
function stopping(container: Container): boolean {
  return container.state === 'stopping';
}

/** What the container's main process writes its pid into before anything else: its cgroup's `cgroup.procs` files. */
function cgroupProcs(container: Container): readonly string[] {
  return container.cgroup?.procsFiles ?? [];
}

function removeSockets(container: Container): void {
  for (const socketPath of container.socketPaths) rmSync(socketPath, { force: true });
}
