/**
 * Consecutive container failures of one unit: the back-off before the next
 * start, and whether the unit is crash-looping.
 */

export interface CrashPolicy {
  /** Back-off after the first failure; it doubles with each further one. */
  readonly backoffBaseMs: number;
  readonly backoffCapMs: number;
  /** Consecutive failures that make a crash loop. */
  readonly threshold: number;
  /** A container healthy this long ends the run of failures. */
  readonly stableMs: number;
}

export const defaultCrashPolicy: CrashPolicy = Object.freeze({ backoffBaseMs: 500, backoffCapMs: 30_000, threshold: 3, stableMs: 10_000 });

/** 0 before any failure, then base, 2×base, 4×base… capped. */
export function backoffMs(failures: number, policy: Pick<CrashPolicy, 'backoffBaseMs' | 'backoffCapMs'>): number {
  if (failures <= 0) return 0;
  return Math.min(policy.backoffCapMs, policy.backoffBaseMs * 2 ** Math.min(failures - 1, 30));
}

export interface LastExit {
  readonly reason: string;
  readonly at: Date;
}

export class CrashTracker {
  readonly #policy: CrashPolicy;
  #failures = 0;
  #lastExit: LastExit | null = null;
  #crashLooping = false;
  #nextAttemptAt = 0;

  constructor(policy: CrashPolicy = defaultCrashPolicy) {
    this.#policy = policy;
  }

  get failures(): number {
    return this.#failures;
  }

  get lastExit(): LastExit | null {
    return this.#lastExit;
  }

  get crashLooping(): boolean {
    return this.#crashLooping;
  }

  /** The back-off that the last failure set (0 without failures). */
  get backoffMs(): number {
    return backoffMs(this.#failures, this.#policy);
  }

  /**
   * A container exited unexpectedly or failed to start. `healthyForMs`: how
   * long it had been healthy, when it had been; a long life first ends the
   * previous run. Returns true when this failure starts a crash loop.
   */
  failed(reason: string, now: number, healthyForMs?: number): boolean {
    if (healthyForMs !== undefined && healthyForMs >= this.#policy.stableMs) this.#failures = 0;
    this.#failures++;
    this.#lastExit = { reason, at: new Date(now) };
    this.#nextAttemptAt = now + this.backoffMs;
    if (this.#crashLooping || this.#failures < this.#policy.threshold) return false;
    this.#crashLooping = true;
    return true;
  }

  /** A container became healthy: no crash loop any more, though failures count on until it proves stable. */
  healthy(): void {
    this.#crashLooping = false;
  }

  /** Call with how long the longest-lived healthy container has been healthy; a stable one clears the failures. */
  observeHealthy(healthyForMs: number): void {
    if (this.#failures > 0 && healthyForMs >= this.#policy.stableMs) {
      this.#failures = 0;
      this.#nextAttemptAt = 0;
    }
  }

  /** A healthy container was stopped for being idle: it proved the unit works, so the run of failures ends. */
  stoppedIdle(): void {
    this.#failures = 0;
    this.#nextAttemptAt = 0;
    this.#crashLooping = false;
  }

  /** Milliseconds until the next start may be attempted (0: now). */
  waitMs(now: number): number {
    return Math.max(0, this.#nextAttemptAt - now);
  }
}
