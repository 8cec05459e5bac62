/**
 * The one polling helper of the tests, for what a test cannot await directly
 * (a child's output, a stand-in's state, the write of a background loop).
 * One copy, so that every wait is bounded the same way and says, when it
 * fails, what it waited for, the probe's last error and the caller's context.
 */
import { AssertionError } from 'node:assert';
import { setImmediate, setTimeout } from 'node:timers/promises';

export interface UntilOptions {
  /** Give up after this long: a bound on a hang, never a timing assertion. Default 30 s. */
  readonly timeoutMs?: number;
  /** Pause between probes; default 20 ms (0: just yield to the event loop). */
  readonly intervalMs?: number;
  /** Appended to the failure message (e.g. the tail of a child process's stderr). */
  readonly context?: () => string;
  /** Checked after each probe that is not yet: a message ends the wait at once with that failure (e.g. the process under test exited). */
  readonly abort?: () => string | undefined;
}

export type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/**
 * Probes (sync or async) until `probe` gives a truthy value, and resolves it.
 * A probe that throws counts as not yet (a server not listening yet), and
 * the last error is in the failure; but a failed assertion in a probe is a
 * check that failed, and fails the wait at once.
 * `options` is the timeout in ms, or UntilOptions.
 */
export async function until<T>(what: string, probe: () => T | PromiseLike<T>, options: number | UntilOptions = {}): Promise<Truthy<T>> {
  const { timeoutMs = 30_000, intervalMs = 20, context, abort } = typeof options === 'number' ? { timeoutMs: options } : options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  const failure = (message: string) => {
    const threw =
      lastError === undefined ? '' : `; the probe last threw: ${lastError instanceof Error ? lastError.message : String(lastError)}`;
    return new Error(`${message}${threw}${context ? `; ${context()}` : ''}`);
  };
  for (;;) {
    try {
      const value = await probe();
      if (value) return value as Truthy<T>;
    } catch (error) {
      if (error instanceof AssertionError) throw error;
      lastError = error;
    }
    const aborted = abort?.();
    if (aborted !== undefined) throw failure(`${aborted} while waiting for ${what}`);
    if (Date.now() > deadline) throw failure(`timed out waiting for ${what} (${timeoutMs} ms)`);
    await (intervalMs > 0 ? setTimeout(intervalMs) : setImmediate());
  }
}
