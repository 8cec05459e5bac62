/**
 * The gateway's side of a call's `timeout` (functions and endpoints). The
 * container enforces it: it answers 504 `timeout` (or a `timeout` error frame)
 * and replaces the worker (sdk/python/svc/runtime/_timeouts.py). The gateway is
 * the backstop for a container that does not: `TIMEOUT_GRACE_MS` past the
 * time-out it answers in the container's place and drops the connection to it,
 * which frees the request's slot. A connection that breaks after the time-out
 * passed is the runtime ending a worker whose code blocked its event loop: a
 * time-out too, not a crash.
 */
import { SvcError } from './errors.js';

/** How long past a call's time-out the container has to answer it itself. */
export const TIMEOUT_GRACE_MS = 5_000;

/** Calls of a workload are bounded: its time-out in seconds, and its name for the message. */
export interface CallLimit {
  readonly workload: string;
  readonly seconds: number;
}

/** The limit of a workload's calls, or undefined for kinds without one (asgi, realtime) and older specs. */
export function callLimitOf(workload: { readonly name: string; readonly timeout?: number }): CallLimit | undefined {
  return workload.timeout === undefined ? undefined : { workload: workload.name, seconds: workload.timeout };
}

export function timeoutError(limit: CallLimit): SvcError {
  return new SvcError('timeout', `${limit.workload} did not finish within its timeout of ${limit.seconds} s; the call was abandoned.`, {
    hint: 'Raise the timeout= of the function or endpoint, or make the call shorter; the workload logs name the call.',
  });
}

/** How often the deadlines of calls in flight are looked at: the backstop fires at most this late. */
const SWEEP_MS = 250;

/**
 * A call's deadline: `expired()` says whether the time-out has passed (the
 * container's own answer is then due), `onBackstop` runs once the grace is
 * over too. `clear()` when the call is over. One sweep timer looks at every
 * deadline in flight, so that arming and clearing one, on every request of
 * a function or endpoint, are a Set add and delete rather than a timer each.
 */
export class CallDeadline {
  static readonly #armed = new Set<CallDeadline>();
  static #sweeper: NodeJS.Timeout | null = null;

  readonly #limit: CallLimit;
  readonly #startedAt = Date.now();
  readonly #backstopAt: number;
  readonly #onBackstop: (error: SvcError) => void;

  /** `graceMs`: how long past the time-out the container may still answer (tests shorten it). */
  constructor(limit: CallLimit, onBackstop: (error: SvcError) => void, graceMs = TIMEOUT_GRACE_MS) {
    this.#limit = limit;
    this.#backstopAt = this.#startedAt + limit.seconds * 1000 + graceMs;
    this.#onBackstop = onBackstop;
    CallDeadline.#armed.add(this);
    if (CallDeadline.#sweeper === null) {
      CallDeadline.#sweeper = setInterval(CallDeadline.#sweep, SWEEP_MS);
      // Calls in flight never keep the process alive on their own.
      CallDeadline.#sweeper.unref();
    }
  }

  /** The time-out error when the call's time is up, else undefined. */
  expired(): SvcError | undefined {
    return Date.now() - this.#startedAt >= this.#limit.seconds * 1000 ? timeoutError(this.#limit) : undefined;
  }

  clear(): void {
    CallDeadline.#armed.delete(this);
  }

  static #sweep(this: void): void {
    const now = Date.now();
    for (const deadline of CallDeadline.#armed) {
      if (now < deadline.#backstopAt) continue;
      CallDeadline.#armed.delete(deadline);
      deadline.#onBackstop(timeoutError(deadline.#limit));
    }
    if (CallDeadline.#armed.size === 0 && CallDeadline.#sweeper !== null) {
      clearInterval(CallDeadline.#sweeper);
      CallDeadline.#sweeper = null;
    }
  }
}
