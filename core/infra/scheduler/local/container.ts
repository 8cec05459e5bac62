import { rmSync } from 'node:fs';
import type { ContainerCgroup } from '../../processes/cgroups/container-cgroup.js';
import type { ProcessGroup } from '../../processes/group.js';
import type { ContainerStatus, DeploymentUnit, LogLine, LogSink } from '../types.js';
import type { RuntimeEvent } from './frames.js';
import type { GpuGrant } from './gpu-allocator.js';
import type { MemoryKills } from './memory-kills.js';
import type { WorkerSet } from './workers.js';

/** One container of the local driver: a runtime process group, its workers' sockets, its cgroup. */
export interface Container {
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
  /** The GPUs it holds (gpu-allocator.ts), from before its launch until it is gone. */
  gpus: GpuGrant | undefined;
}

const RECENT_LINES = 30;

/**
 * Where the driver's lines go: the log sink, and a container's last lines,
 * kept for the error when it fails to start. A runtime event passes here
 * too, as a worker's death is told in the logs when memory caused it.
 */
export class ContainerLog {
  constructor(private readonly logs: LogSink) {}

  emit(unit: string, container: string, stream: LogLine['stream'], text: string): void {
    this.logs({ unit, container, stream, text, time: new Date() });
  }

  log(container: Container, stream: LogLine['stream'], text: string): void {
    container.recent.push(text);
    if (container.recent.length > RECENT_LINES) container.recent.shift();
    this.emit(container.unit.key, container.id, stream, text);
  }

  /** The runtime's events of a container: a worker's death is checked against the memory limit first. */
  onRuntimeEvent(container: Container, event: RuntimeEvent): void {
    if (event.event === 'worker_exited') this.memoryKilled(container, `worker ${event.worker}`, event.worker);
    else if (event.event === 'listening') container.memoryKills?.replaced(event.worker);
    container.workers.onEvent(event);
  }

  /** After a process of the container exited: whether the kernel killed it for memory (said in the logs). */
  memoryKilled(container: Container, who: string, worker?: number): boolean {
    const kills = container.memoryKills;
    if (!kills?.sinceLastLook(worker)) return false;
    this.log(
      container,
      'system',
      `${who} of container ${container.id} was killed by the kernel: the container went past its memory limit (${kills.limit})`,
    );
    return true;
  }
}

/** Read through a call: a stop may begin while a launch awaits, which narrowing cannot know. */
export function stopping(container: Container): boolean {
  return container.state === 'stopping';
}

/** What the container's main process writes its pid into before anything else: its cgroup's `cgroup.procs` files. */
export function cgroupProcs(container: Container): readonly string[] {
  return container.cgroup?.procsFiles ?? [];
}

export function removeSockets(container: Container): void {
  for (const socketPath of container.socketPaths) rmSync(socketPath, { force: true });
}
