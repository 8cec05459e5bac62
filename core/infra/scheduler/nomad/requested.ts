/**
 * Containers a `scale` asked Nomad for that its allocations do not show yet.
 * The SchedulerDriver contract says the containers a scale adds appear in
 * `status()` (state `starting`) before `scale` returns to the event loop, so
 * that a second decision in the same turn (the autoscaler's) counts them;
 * but the driver learns of allocations only when Nomad answers. Until the
 * scale settles, `status()` fills the gap with placeholders (`requested-<n>`,
 * no workers). `stop()` of a placeholder does nothing: it is not a container.
 */
import type { NomadContainerStatus } from './types.js';

export interface Requested {
  readonly count: number;
  readonly since: Date;
}

export const REQUESTED_ID_PREFIX = 'requested-';

export function withRequested(
  key: string,
  jobId: string,
  group: string,
  status: NomadContainerStatus[],
  requested: Requested | undefined,
): NomadContainerStatus[] {
  if (requested === undefined) return status;
  const live = status.filter((c) => c.state !== 'stopping').length;
  const missing = Math.max(0, requested.count - live);
  const placeholders = Array.from(
    { length: missing },
    (_, n): NomadContainerStatus => ({
      id: `${REQUESTED_ID_PREFIX}${jobId}-${n}`,
      unit: key,
      state: 'starting',
      pid: undefined,
      startedAt: requested.since,
      healthyAt: undefined,
      startedFrom: 'process',
      workers: [],
      allocationName: `${jobId}.${group}[requested]`,
      clientStatus: 'pending',
      desiredStatus: 'run',
      jobVersion: -1,
    }),
  );
  return [...status, ...placeholders];
}
