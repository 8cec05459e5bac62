/**
 * Timers a test moves by hand, for code that takes its timers as an option
 * (the Consul stand-in's session TTLs): `advance(ms)` runs every timer due by
 * then, in order, so a 20 s expiry is tested at once and to the millisecond.
 */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real ones: what code uses when no test gives it others. */
export const realTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export class ManualTimers implements Timers {
  #now = 0;
  #next = 1;
  readonly #due = new Map<number, { at: number; callback: () => void }>();

  setTimeout(callback: () => void, ms: number): number {
    const id = this.#next++;
    this.#due.set(id, { at: this.#now + Math.max(0, ms), callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#due.delete(handle as number);
  }

  /** Moves the clock on by `ms`, running each timer that comes due on the way (earliest first). */
  advance(ms: number): void {
    const end = this.#now + ms;
    for (;;) {
      const [id, timer] = [...this.#due].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0] ?? [];
      if (id === undefined || timer === undefined) break;
      this.#due.delete(id);
      this.#now = timer.at;
      timer.callback();
    }
    this.#now = end;
  }
}
