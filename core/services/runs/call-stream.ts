/**
 * Sends one pickled call to a container and hands back its answer as a
 * stream: the caller's body goes in (whole, or streamed: call-body.ts), the
 * container's NDJSON frames stream out as they are written (backpressure
 * through undici). The slot is held until the answer has been read or
 * abandoned. A connection that breaks mid-answer (the container died) ends
 * the stream with an error frame, so a client always gets a last frame.
 * `limit` bounds the call by its function's time-out: the container answers
 * it itself; past the grace the call ends here with a `timeout` frame
 * (gateway/call-timeout.ts).
 *
 * It speaks undici's lowest layer, `dispatch` with a handler of its own (as
 * the gateway's workload path does): the container's chunks are pushed into
 * the answer stream as they arrive, with no request or body stream of
 * undici's, no abort signals and no pipe in between — on a warm call they
 * cost more than the call's own few frames.
 */
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { Slot, UpstreamPools } from '../../traffic/gateway/types.js';
import { CallDeadline, type CallLimit } from '../../model/call-timeout.js';
import type { SvcError } from '../../model/errors.js';
import { upstreamError } from '../../model/upstream-error.js';
import type { CallBody } from './call-body.js';
import { brokenCallFrame, type CallAnswer } from './types.js';

export const CALL_CONTENT_TYPE = 'application/vnd.svc.call+pickle';

/** Answer headers passed on from the container. */
const PASSED_ON = new Set(['content-type', 'cache-control']);

type Upstreams = Pick<UpstreamPools, 'dispatch' | 'crashCause'>;

export function sendCall(
  upstreams: Upstreams,
  slot: Slot,
  body: CallBody,
  signal: AbortSignal,
  requestId: string,
  limit?: CallLimit,
  contentType: string = CALL_CONTENT_TYPE,
): Promise<CallAnswer> {
  return new Promise((resolve, reject) => {
    const call = new CallHandler(upstreams, slot, signal, limit, resolve, reject);
    try {
      upstreams.dispatch(
        slot.instance,
        { method: 'POST', path: '/', headers: { 'content-type': contentType, 'x-request-id': requestId }, body },
        call,
      );
    } catch (error) {
      call.onError(error as Error); // undici reports its errors to the handler; this is for anything else
    }
  });
}

/** One call on its way: undici's handler for the container's answer, and the answer's stream once its head came. */
class CallHandler implements Dispatcher.DispatchHandler {
  readonly #upstreams: Upstreams;
  readonly #slot: Slot;
  /** The client's connection: its end cuts the call (before and after the answer began). */
  readonly #signal: AbortSignal;
  readonly #deadline: CallDeadline | undefined;
  #resolve: ((answer: CallAnswer) => void) | null;
  readonly #reject: (error: unknown) => void;
  /** The time-out's error, once the backstop cut the call. */
  #expired: SvcError | undefined;
  #abort: ((error?: Error) => void) | null = null;
  #resume: (() => void) | null = null;
  #out: Readable | null = null;
  #status = 0;
  /** The container's answer is over (complete or failed): nothing is left to cut. */
  #done = false;
  #released = false;

  constructor(
    upstreams: Upstreams,
    slot: Slot,
    signal: AbortSignal,
    limit: CallLimit | undefined,
    resolve: (answer: CallAnswer) => void,
    reject: (error: unknown) => void,
  ) {
    this.#upstreams = upstreams;
    this.#slot = slot;
    this.#signal = signal;
    this.#resolve = resolve;
    this.#reject = reject;
    this.#deadline =
      limit &&
      new CallDeadline(limit, (error) => {
        this.#expired = error;
        this.#cut(error);
      });
    signal.addEventListener('abort', this.#onClientGone, { once: true });
  }

  readonly #onClientGone = () => this.#cut();

  #cut(error?: Error): void {
    if (!this.#done) this.#abort?.(error);
  }

  /** Once: the slot goes back, the deadline and the client's connection are no longer watched. */
  #release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#deadline?.clear();
    this.#signal.removeEventListener('abort', this.#onClientGone);
    this.#slot.release();
  }

  onConnect(abort: (error?: Error) => void): void {
    if (this.#signal.aborted) abort();
    else if (this.#expired) abort(this.#expired);
    else this.#abort = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (statusCode < 200) return true; // 1xx: informational
    this.#status = statusCode;
    this.#resume = resume;
    const headers: Record<string, string> = {};
    const repeated = new Set<string>();
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!.toString('latin1').toLowerCase();
      if (!PASSED_ON.has(name)) continue;
      if (name in headers) repeated.add(name);
      headers[name] = rawHeaders[i + 1]!.toString('latin1');
    }
    for (const name of repeated) delete headers[name]; // a header said twice is not passed on
    const out = new Readable({
      read: () => this.#resume?.(),
      // The answer was read to its end, or abandoned (the client went away): the container is not read any further.
      destroy: (error, callback) => {
        this.#release();
        this.#cut();
        callback(error);
      },
    });
    this.#out = out;
    const resolve = this.#resolve!;
    this.#resolve = null;
    resolve({ status: statusCode, headers, body: out });
    return true;
  }

  onData(chunk: Buffer): boolean {
    const out = this.#out!;
    return out.destroyed || out.push(chunk);
  }

  onComplete(): void {
    this.#done = true;
    this.#out!.push(null);
  }

  onError(error: Error): void {
    this.#done = true;
    this.#release();
    const instance = this.#slot.instance;
    const crashCause = () => this.#upstreams.crashCause(instance);
    const out = this.#out;
    if (out === null) {
      this.#reject(this.#expired ?? upstreamError(error, this.#signal.aborted, crashCause));
      return;
    }
    if (out.destroyed) return;
    // Only a 200 answer is a frame stream; any other answer just ends short. Past the time-out, a broken
    // connection is the runtime ending a stuck worker (or the backstop's cut): a time-out, not a crash.
    const why = this.#signal.aborted ? undefined : (this.#expired ?? this.#deadline?.expired());
    if (this.#status === 200) out.push(brokenCallFrame(why ?? upstreamError(error, this.#signal.aborted, crashCause)));
    out.push(null);
  }
}
