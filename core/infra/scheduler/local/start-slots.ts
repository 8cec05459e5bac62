/**
 * How many containers of this machine may be in their first seconds at once.
 * A container's start is mostly CPU (the interpreter, the user's imports):
 * ten containers of one app started together on two cores each took ten
 * times as long, and one of them ran past the start time-out that measures
 * a single start. A container waits for a slot before it launches, and its
 * time-out counts from then. A slot is given back once the container is
 * healthy or has failed, or after `holdMs` whichever comes first, so a slow
 * `on_start` (a model loading for minutes) holds up the containers behind
 * it for seconds, not for its whole start.
 */
export class StartSlots {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(
    readonly size: number,
    private readonly holdMs: number,
  ) {
    this.#free = size;
  }

  /** How many containers hold a slot now. */
  get taken(): number {
    return this.size - this.#free;
  }

  /** Whether a container asking now would wait. */
  get full(): boolean {
    return this.#free === 0;
  }

  /**
   * Resolves with the slot's release once one is free (first come, first
   * served), or with undefined when `signal` aborts first. The release may be
   * called more than once; the slot goes back once.
   */
  async take(signal: AbortSignal): Promise<(() => void) | undefined> {
    if (signal.aborted) return undefined;
    if (this.#free > 0) {
      this.#free -= 1;
      return this.#holding();
    }
    const granted = await new Promise<boolean>((resolve) => {
      const grant = () => {
        signal.removeEventListener('abort', abort);
        resolve(true);
      };
      const abort = () => {
        const at = this.#waiting.indexOf(grant);
        if (at >= 0) this.#waiting.splice(at, 1);
        resolve(false);
      };
      this.#waiting.push(grant);
      signal.addEventListener('abort', abort, { once: true });
    });
    return granted ? this.#holding() : undefined;
  }

  #holding(): () => void {
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      clearTimeout(timer);
      const next = this.#waiting.shift();
      // A waiter takes the slot over as it is; otherwise it is free again.
      if (next) next();
      else this.#free += 1;
    };
    const timer = setTimeout(release, this.holdMs);
    timer.unref();
    return release;
  }
}
