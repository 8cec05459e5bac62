import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { SvcError } from '../../errors.js';
import { sdkPythonPath } from '../../paths.js';
import type { ServiceRegistry } from '../../registry/types.js';
import type { ContainerStatus, DeploymentUnit, LogSink, SchedulerDriver } from '../types.js';
import { waitHealthy } from './health.js';
import { spawnGroup, type ProcessGroup } from '../../processes/group.js';
import { makeSocketDir } from './socket-dir.js';

export interface LocalDriverOptions {
  readonly registry: ServiceRegistry;
  readonly logs: LogSink;
  /** How long a container may take to answer its health route. */
  readonly startTimeoutMs?: number;
  /** How long a stopping container may drain before it is killed. */
  readonly stopGraceMs?: number;
  /** Called when a healthy container exits on its own (for events). */
  readonly onContainerExit?: (unit: DeploymentUnit, containerId: string, reason: string) => void;
}

interface Container {
  readonly id: string;
  readonly unit: DeploymentUnit;
  readonly socketPath: string;
  readonly group: ProcessGroup;
  readonly startedAt: Date;
  state: ContainerStatus['state'];
  readonly recent: string[];
}

const RECENT_LINES = 30;

/**
 * The embedded driver: each container is a `python -m svc.runtime` process
 * group serving one workload on a Unix socket in a private folder.
 */
export interface LocalDriver extends SchedulerDriver {
  /** This driver's private socket folder; every container's command line names it. */
  readonly socketDir: string;
}

export function createLocalDriver(options: LocalDriverOptions): LocalDriver {
  const units = new Map<string, DeploymentUnit>();
  const containers = new Map<string, Container>();
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const stopGraceMs = options.stopGraceMs ?? 5_000;
  const socketDir = makeSocketDir();

  // Nothing async runs during 'exit': kill synchronously. The stdin lifeline covers SIGKILL of Node.
  const killAll = () => {
    for (const container of containers.values()) container.group.killNow();
  };
  process.on('exit', killAll);

  function log(container: Container, stream: 'stdout' | 'stderr' | 'system', text: string): void {
    container.recent.push(text);
    if (container.recent.length > RECENT_LINES) container.recent.shift();
    options.logs({ unit: container.unit.key, container: container.id, stream, text, time: new Date() });
  }

  async function startContainer(unit: DeploymentUnit): Promise<void> {
    const id = `c-${randomBytes(5).toString('hex')}`;
    const socketPath = path.join(socketDir, `${id}.sock`);
    rmSync(socketPath, { force: true });
    const { workload, source } = unit;
    let container: Container | undefined;
    const group = spawnGroup({
      command: unit.image.pythonPath,
      args: ['-m', 'svc.runtime', '--root', source.root, '--entry', source.entry, '--workload', workload.name, '--socket', socketPath],
      cwd: source.root,
      env: runtimeEnv(unit),
      onLine: (stream, text) => container && log(container, stream, text),
    });
    container = { id, unit, socketPath, group, startedAt: new Date(), state: 'starting', recent: [] };
    containers.set(id, container);
    log(container, 'system', `starting container ${id} for ${workload.name}`);

    const outcome = await waitHealthy({ socketPath, timeoutMs: startTimeoutMs, cancelled: () => group.hasExited() || container!.state === 'stopping' });
    // A stop may have begun while the last probe was in flight: never register a stopping container.
    if (outcome !== 'healthy' || container.state !== 'starting') {
      const reason = group.hasExited() ? `exited with ${describeExit(await group.exited)}` : outcome === 'timeout' ? `did not become healthy within ${startTimeoutMs / 1000} s` : 'was stopped while starting';
      await stopContainer(container);
      throw new SvcError('container_failed', `container ${id} of ${workload.name} ${reason}.${container.recent.length ? `\nLast log lines:\n${container.recent.join('\n')}` : ''}`, {
        details: { unit: unit.key, container: id, logs: [...container.recent] },
      });
    }
    container.state = 'healthy';
    log(container, 'system', `container ${id} is healthy`);
    await options.registry.register({
      id,
      service: unit.key,
      address: { kind: 'unix', socketPath },
      capacity: workload.scaling.workers * workload.scaling.concurrency,
      meta: { app: unit.ref.app, workload: workload.name, stage: unit.ref.stage, workspace: unit.ref.workspace },
    });
    void group.exited.then(async (exit) => {
      if (container!.state === 'stopping') return;
      container!.state = 'exited';
      containers.delete(id);
      rmSync(socketPath, { force: true });
      await options.registry.deregister(id);
      const reason = `exited unexpectedly with ${describeExit(exit)}`;
      log(container!, 'system', `container ${id} ${reason}`);
      options.onContainerExit?.(unit, id, reason);
    });
  }

  async function stopContainer(container: Container): Promise<void> {
    container.state = 'stopping';
    await options.registry.deregister(container.id);
    await container.group.stop(stopGraceMs);
    container.state = 'exited';
    containers.delete(container.id);
    rmSync(container.socketPath, { force: true });
  }

  function containersOf(key: string): Container[] {
    return [...containers.values()].filter((c) => c.unit.key === key && c.state !== 'stopping' && c.state !== 'exited');
  }

  return {
    name: 'local',
    socketDir,
    async submit(unit) {
      units.set(unit.key, unit);
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
    async remove(key) {
      units.delete(key);
      await Promise.all([...containers.values()].filter((c) => c.unit.key === key).map(stopContainer));
    },
    status(key) {
      return [...containers.values()]
        .filter((c) => c.unit.key === key)
        .map((c) => ({ id: c.id, unit: key, state: c.state, pid: c.group.pid, startedAt: c.startedAt }));
    },
    async close() {
      await Promise.all([...containers.values()].map(stopContainer));
      units.clear();
      process.off('exit', killAll);
      rmSync(socketDir, { recursive: true, force: true });
    },
  };
}

function runtimeEnv(unit: DeploymentUnit): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1' };
  env.PYTHONPATH = sdkPythonPath;
  env.SVC_APP = unit.ref.app;
  env.SVC_WORKLOAD = unit.workload.name;
  env.SVC_STAGE = unit.ref.stage;
  env.SVC_WORKSPACE = unit.ref.workspace;
  delete env.VIRTUAL_ENV;
  return env;
}

function describeExit(exit: { code: number | null; signal: NodeJS.Signals | null }): string {
  return exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`;
}
