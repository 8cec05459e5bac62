/**
 * When `svc serve` reloads: file events arrive in bursts (an editor's save is
 * often several), so a reload starts once none came for `quietMs` (but no
 * later than `maxWaitMs` after the first of them). Never two reloads at once:
 * events during a reload are gathered into exactly one more reload after it,
 * so the last save is never lost. Timers are injected for tests.
 */

export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** The events one reload answers. */
export interface ReloadBatch {
  /** Changed paths (relative to the project), in the order first seen, each once. */
  readonly paths: readonly string[];
  /** When the first of them was seen (the save), on the clock's time line. */
  readonly firstAt: number;
}

export interface SchedulerOptions {
  /** How long the files must stay quiet before a reload starts. */
  readonly quietMs?: number;
  /** Upper bound on the wait after the first event of a burst that never stops. */
  readonly maxWaitMs?: number;
  readonly clock?: Clock;
}

export const DEFAULT_QUIET_MS = 15;
export const DEFAULT_MAX_WAIT_MS = 150;

export class ReloadScheduler {
  readonly #run: (batch: ReloadBatch) => Promise<void>;
  readonly #quietMs: number;
  readonly #maxWaitMs: number;
  readonly #clock: Clock;
  #paths = new Set<string>();
  #firstAt = 0;
  #lastAt = 0;
  #timer: unknown = undefined;
  #running: Promise<void> | undefined;
  #paused: boolean;
  #closed = false;

  /** A scheduler created `paused` gathers events and starts nothing until `resume()`. */
  constructor(run: (batch: ReloadBatch) => Promise<void>, options: SchedulerOptions & { readonly paused?: boolean } = {}) {
    this.#run = run;
    this.#quietMs = options.quietMs ?? DEFAULT_QUIET_MS;
    this.#maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
    this.#clock = options.clock ?? systemClock;
    this.#paused = options.paused ?? false;
  }

  /** A file changed. */
  notify(path: string): void {
    if (this.#closed) return;
    const now = this.#clock.now();
    if (this.#paths.size === 0) this.#firstAt = now;
    this.#lastAt = now;
    this.#paths.add(path);
    // During a reload the events wait: its end arms the timer again.
    if (!this.#running && !this.#paused) this.#arm();
  }

  /** Starts reloading (the first deploy is done); events gathered meanwhile lead to one reload. */
  resume(): void {
    this.#paused = false;
    if (this.#paths.size > 0 && !this.#running) this.#arm();
  }

  /** True while a reload runs. */
  get busy(): boolean {
    return this.#running !== undefined;
  }

  /** Starts no more reloads; resolves once the one running (if any) ended. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  #arm(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    const due = Math.min(this.#lastAt + this.#quietMs, this.#firstAt + this.#maxWaitMs);
    this.#timer = this.#clock.setTimeout(() => this.#fire(), Math.max(0, due - this.#clock.now()));
  }

  #fire(): void {
    this.#timer = undefined;
    if (this.#closed || this.#running || this.#paths.size === 0) return;
    const batch: ReloadBatch = { paths: [...this.#paths], firstAt: this.#firstAt };
    this.#paths = new Set();
    this.#running = this.#run(batch)
      .catch(() => {}) // the run reports its own failures
      .finally(() => {
        this.#running = undefined;
        if (!this.#closed && this.#paths.size > 0) this.#arm();
      });
  }
}
