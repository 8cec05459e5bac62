/**
 * How many of a map's inputs svc keeps dispatched at once: waiting for a
 * slot on a container, or running. The rest wait in the client (which the
 * inputs route holds until the window has room), so neither side holds all
 * the inputs, however many there are.
 */
import type { ScalingSpec } from '../../model/workload/types.js';

/** Inputs dispatched at once, at most: each holds its pickled call in svc's memory. */
export const MAX_WINDOW = 10_000;
/** Bytes of pickled calls dispatched at once, at most (one input always goes, whatever its size). */
export const MAX_WINDOW_BYTES = 64 * 1024 * 1024;

/**
 * `2 × max_containers × max(workers × concurrency, tasks_per_container) + 16`,
 * at most MAX_WINDOW. One `max_containers × workers × concurrency` keeps every
 * slot of every container the function may scale to busy; the second as many
 * again wait in the gateway's queue, so that a slot freed takes the next input
 * at once rather than after the client's next batch. The queue is also the
 * backlog the autoscaler sees (in flight + queued): with `tasks_per_container`
 * in the product it reaches `max_containers × tasks_per_container`, which
 * starts every container the function may have. The 16 keeps a small
 * function's pipe full while batches come and go.
 */
export function windowSize(scaling: ScalingSpec): number {
  const { workers, concurrency, autoscaler } = scaling;
  const perContainer = Math.max(workers * concurrency, autoscaler.tasksPerContainer);
  return Math.min(MAX_WINDOW, 2 * autoscaler.maxContainers * perContainer + 16);
}
