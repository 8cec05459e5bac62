import { availableParallelism } from 'node:os';
import { rmSync } from 'node:fs';
import { SvcError } from '../../../model/errors.js';
import type { ContainerCgroup } from '../../processes/cgroups/container-cgroup.js';
import { openSvcCgroups } from '../../processes/cgroups/svc-cgroups.js';
import type { ServiceRegistry } from '../../registry/types.js';
import type { DeploymentUnit, LogSink, SchedulerDriver } from '../types.js';
import { type Container, ContainerLog } from './container.js';
import { LocalContainers } from './containers.js';
import { ForkSources, type TemplateStatus } from './fork-sources.js';
import { makeSocketDir } from './socket-dir.js';
import { StartSlots } from './start-slots.js';
import { GpuAllocator } from './gpu-allocator.js';
import type { GpuDevice } from '../../../model/gpus/nvidia-smi-csv.js';

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
   * warmed process per image, started when the image's first container starts)
   * instead of spawning a new interpreter each. Default off; the platform turns it on (unless SVC_ZYGOTES=0).
   */
  readonly zygotes?: boolean;
  /**
   * Only cgroup filesystems mounted at or below this folder hold the
   * containers' cgroups; null (default): any in /proc/self/mountinfo.
   */
  readonly cgroupRoot?: string | null;
  /** How many containers may start at once (default: the machine's CPUs, at least 2); see StartSlots. */
  readonly startSlots?: number;
  /** The machine's GPUs (core/infra/gpus/inventory.ts): containers of workloads with `gpu` get theirs; absent: none. */
  readonly gpus?: readonly GpuDevice[];
}

/** How long one starting container may keep others waiting for its slot. */
const START_SLOT_HOLD_MS = 10_000;

/**
 * The embedded driver: each container is a `python -m svc.runtime` process
 * group — a supervisor and its workers, each worker on its own Unix socket
 * in a private folder. A unit with `checkpoint_enabled` gets a template
 * process that ran imports and on_start once; its containers are forked
 * from it, or started from scratch when it cannot serve (said in the logs).
 * With zygotes (the platform's default), the other containers fork from
 * a zygote of their image — a process that imported the runtime once —
 * and import the user's code fresh (the image's first container waits for
 * the zygote to start); any the zygote cannot start are spawned as new processes.
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

export { type TemplateStatus, ZYGOTE_LOG_UNIT } from './fork-sources.js';

/** The driver's parts, each given the settings it needs (defaults filled in). */
function driverParts(options: LocalDriverOptions) {
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const stopGraceMs = options.stopGraceMs ?? 5_000;
  const socketDir = makeSocketDir();
  const cgroups = openSvcCgroups({ under: options.cgroupRoot ?? null });
  const out = new ContainerLog(options.logs);
  const gpus = new GpuAllocator(options.gpus ?? []);
  const forks = new ForkSources({ socketDir, startTimeoutMs, stopGraceMs, out, machineHasGpus: gpus.devices.length > 0 });
  const containers = new LocalContainers({
    registry: options.registry,
    cgroups,
    forks,
    out,
    socketDir,
    startTimeoutMs,
    stopGraceMs,
    useZygotes: options.zygotes ?? false,
    startSlots: new StartSlots(options.startSlots ?? Math.max(2, availableParallelism()), START_SLOT_HOLD_MS),
    gpus,
    onContainerExit: options.onContainerExit,
  });
  return { socketDir, cgroups, forks, containers, gpus };
}

/**
 * The driver's parts, put together: the fork sources (templates, zygotes),
 * the containers, and the units submitted. See LocalContainers and ForkSources.
 */
export function createLocalDriver(options: LocalDriverOptions): LocalDriver {
  const units = new Map<string, DeploymentUnit>();
  const { socketDir, cgroups, forks, containers, gpus } = driverParts(options);
  const stop = (container: Container) => containers.stop(container);

  // Nothing async runs during 'exit': kill synchronously. The lifelines cover SIGKILL of Node.
  const killAll = () => {
    containers.killNow();
    forks.killNow();
  };
  process.on('exit', killAll);

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
      if (previous && previous !== unit) await forks.stopTemplate(unit.key);
    },
    async scale(key, count) {
      const unit = units.get(key);
      if (!unit) throw new SvcError('not_found', `no deployment unit ${key}`);
      const current = containers.active(key);
      if (current.length > count) {
        await Promise.all(current.slice(count).map(stop));
        return;
      }
      const starts = Array.from({ length: count - current.length }, () => containers.start(unit));
      const results = await Promise.allSettled(starts);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
    async stop(key, containerId) {
      const container = containers.get(containerId);
      if (!container || container.unit.key !== key || container.state === 'stopping' || container.state === 'exited') return;
      await stop(container);
    },
    async remove(key) {
      units.delete(key);
      // Together: a container still waiting for the template's on_start gives up once the template stops.
      await Promise.all([...containers.of(key).map(stop), forks.stopTemplate(key)]);
    },
    status: (key) => containers.status(key),
    usage: (key) => containers.usage(key),
    // A machine without GPUs says nothing of them.
    ...(gpus.devices.length === 0 ? {} : { gpus: () => gpus.state() }),
    exec: (key, containerId, request) => containers.exec(key, containerId, request),
    terminal: (key, containerId, request) => containers.terminal(key, containerId, request),
    template: (key) => forks.template(key),
    zygote: (pythonPath) => forks.zygote(pythonPath),
    async close() {
      const stoppingZygotes = forks.stopZygotes();
      await Promise.all([...containers.all().map(stop), ...forks.stopTemplates(), ...stoppingZygotes]);
      units.clear();
      await containers.removed();
      cgroups.close();
      process.off('exit', killAll);
      rmSync(socketDir, { recursive: true, force: true });
    },
  };
}
