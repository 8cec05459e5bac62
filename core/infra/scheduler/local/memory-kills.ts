import { SvcError } from '../../../model/errors.js';
import type { ContainerCgroup } from '../../processes/cgroups/container-cgroup.js';
import { formatMemoryMiB } from '../../../model/workload/memory.js';

/**
 * Which deaths in one container were the kernel's doing for memory: the
 * cgroup's OOM-kill counter rises before the victim is even signalled, so
 * a worker whose exit comes with a rise since the last look was killed for
 * memory. Until its replacement listens, a request that was on it is
 * answered `memory_limit_exceeded` rather than `worker_crashed`; a request
 * may also break before the runtime reports the exit, which the counter
 * alone then tells.
 */
export class MemoryKills {
  readonly #cgroup: ContainerCgroup;
  #seen = 0;
  readonly #killed = new Set<number>();

  constructor(cgroup: ContainerCgroup) {
    this.#cgroup = cgroup;
  }

  /** The limit as the workload wrote it: `memory="128Mi"`. */
  get limit(): string {
    return `memory="${formatMemoryMiB(this.#cgroup.limits.memoryMiB)}"`;
  }

  /** After a process of the container exited: true when the kernel killed one for memory since the last look. */
  sinceLastLook(worker?: number): boolean {
    const kills = this.#count();
    if (kills <= this.#seen) return false;
    this.#seen = kills;
    if (worker !== undefined) this.#killed.add(worker);
    return true;
  }

  /** The worker's replacement listens: its slot serves again. */
  replaced(worker: number): void {
    this.#killed.delete(worker);
  }

  /** Why a request on `worker` broke, when it was memory; undefined otherwise. */
  explain(worker: number): SvcError | undefined {
    if (!this.#killed.has(worker) && this.#count() <= this.#seen) return undefined;
    return new SvcError(
      'memory_limit_exceeded',
      `the worker handling this request was killed: its container went past its memory limit (${this.limit}).`,
      {
        hint: "Raise the workload's memory option, or use less memory at once; a fresh worker takes the next request.",
      },
    );
  }

  #count(): number {
    try {
      return this.#cgroup.memoryKills();
    } catch {
      return this.#seen; // the cgroup is gone with its container
    }
  }
}
