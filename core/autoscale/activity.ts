/** What admission knows of a container's use: the sum over its workers, each a registry instance. */
import type { Admission } from '../gateway/admission.js';
import type { ContainerStatus } from '../scheduler/types.js';

export interface ContainerUse {
  /** Requests in flight on its workers. */
  readonly inFlight: number;
  /** When one of its workers last took or gave back a slot (ms since the epoch); undefined if never. */
  readonly lastActiveAt: number | undefined;
}

export function containerUse(container: ContainerStatus, admission: Admission): ContainerUse {
  let inFlight = 0;
  let lastActiveAt: number | undefined;
  for (const worker of container.workers) {
    const use = admission.use(worker.instanceId);
    inFlight += use.inFlight;
    if (use.lastActiveAt !== undefined) lastActiveAt = Math.max(lastActiveAt ?? 0, use.lastActiveAt);
  }
  return { inFlight, lastActiveAt };
}
