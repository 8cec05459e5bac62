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
import { SvcError } from '../errors.js';

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

/**
 * A timer for one call: `expired()` says whether the time-out has passed (the
 * container's own answer is then due), `onBackstop` runs once the grace is over
 * too. `clear()` when the call is over.
 */
export class CallDeadline {
  readonly #limit: CallLimit;
  readonly #startedAt = Date.now();
  readonly #timer: NodeJS.Timeout;

  constructor(limit: CallLimit, onBackstop: (error: SvcError) => void) {
    this.#limit = limit;
    this.#timer = setTimeout(() => onBackstop(timeoutError(limit)), limit.seconds * 1000 + TIMEOUT_GRACE_MS);
  }

  /** The time-out error when the call's time is up, else undefined. */
  expired(): SvcError | undefined {
    return Date.now() - this.#startedAt >= this.#limit.seconds * 1000 ? timeoutError(this.#limit) : undefined;
  }

  clear(): void {
    clearTimeout(this.#timer);
  }
}
