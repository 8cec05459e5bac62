/** Which containers a scale-down stops: a pure choice, so it is tested on its own. */

export interface ContainerActivity {
  readonly id: string;
  /** Requests in flight on all of its workers. */
  readonly inFlight: number;
  /** When it last took or finished a request, or became healthy if it never did (ms since the epoch). */
  readonly lastActiveAt: number;
}

/**
 * Up to `excess` containers to stop: only those with nothing in flight that
 * have been idle for at least `keepWarmMs`, least recently used first (ties
 * by id, so the choice is stable).
 */
export function idleContainersToStop(containers: readonly ContainerActivity[], excess: number, now: number, keepWarmMs: number): string[] {
  if (excess <= 0) return [];
  return containers
    .filter((c) => c.inFlight === 0 && now - c.lastActiveAt >= keepWarmMs)
    .sort((a, b) => a.lastActiveAt - b.lastActiveAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, excess)
    .map((c) => c.id);
}
