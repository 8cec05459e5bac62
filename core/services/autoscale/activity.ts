/** What admission knows of a container's use: the sum over its workers, each a registry instance, here and on the other replicas. */
import type { Admission } from '../../traffic/gateway/types.js';
import type { ContainerStatus } from '../../infra/scheduler/types.js';
import type { PeerLoadView } from './types.js';

export interface ContainerUse {
  /** Requests in flight on its workers. */
  readonly inFlight: number;
  /** When one of its workers last took or gave back a slot (ms since the epoch); undefined if never. */
  readonly lastActiveAt: number | undefined;
}

export function containerUse(container: ContainerStatus, admission: Admission, peers?: PeerLoadView): ContainerUse {
  let inFlight = 0;
  let lastActiveAt: number | undefined;
  const add = (use: ContainerUse) => {
    inFlight += use.inFlight;
    if (use.lastActiveAt !== undefined) lastActiveAt = Math.max(lastActiveAt ?? 0, use.lastActiveAt);
  };
  for (const worker of container.workers) {
    add(admission.use(worker.instanceId));
    // A request on another replica keeps it busy; the later last use counts.
    if (peers) add(peers.use(worker.instanceId));
  }
  return { inFlight, lastActiveAt };
}
