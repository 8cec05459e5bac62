import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { SvcError, toSvcError } from '../../model/errors.js';
import type { WorkloadMeter } from '../../infra/metrics/platform-metrics.js';
import type { Instance } from '../../infra/registry/types.js';
import type { Slot } from './admission.js';
import { CallDeadline, type CallLimit } from '../../model/call-timeout.js';
import { connectionSignal } from './connection-signal.js';
import { responseHead } from './forward-headers.js';
import { forgetHead, holdHead, releaseHead } from './head-hold.js';
import { respondError, type ErrorReporter } from './respond-error.js';
import { upstreamError } from '../../model/upstream-error.js';
import type { Socket } from 'node:net';
import { bytesInSinceLast, bytesOutSinceLast } from './wire-bytes.js';

/** Answers up to this size with a declared length are collected, then sent in one write with the head. */
const SMALL_BODY = 64 * 1024;

/**
 * One proxied request, from admission to the last byte: it holds the slot,
 * notices the client leaving, and is the undici dispatch handler that writes
 * the container's answer straight into the client's response.
 *
 * Small answers of known length are collected and sent with their head in one
 * write, so that a container dying halfway still gets a clean 502. Anything
 * else (chunked, SSE, large) streams: each chunk goes out as it arrives, with
 * backpressure from the client's socket to the container's; the head of one
 * of unknown length waits for its first piece, briefly (head-hold.ts), so
 * that a short chunked answer still leaves in one write.
 *
 * The slot is released when the response is done or the connection is gone
 * (`close`, either way, or the connection's signal for a pipelined response
 * that never got the socket); a client leaving aborts the queue wait (through
 * its connection's signal) and the call to the container.
 */
export class Exchange implements Dispatcher.DispatchHandler {
  readonly #req: IncomingMessage;
  readonly #res: ServerResponse;
  readonly #requestId: string;
  readonly #report: ErrorReporter;
  readonly #isHead: boolean;
  /** Aborted when the client's connection closes: admission's queue wait listens to it (made when first asked for). */
  #connection: AbortSignal | null = null;
  /** The response closed before it was finished: the client went away. */
  #clientGone = false;
  /** #onClose ran: the slot is back (it may run twice, see hold()). */
  #closed = false;
  /** #onClose also listens to the connection's signal (a pipelined request's response, see hold()). */
  #watchesConnection = false;
  #slot: Slot | null = null;
  #crashCause: ((instance: Instance) => SvcError | undefined) | undefined;
  /** The call's time-out (call-timeout.ts), once it is sent on; the error once the backstop fired. */
  #deadline: CallDeadline | null = null;
  #expired: SvcError | null = null;
  #abortUpstream: ((error?: Error) => void) | null = null;
  /** A small answer being collected: status, head, chunks. */
  #status = 0;
  #headers: string[] | null = null;
  #chunks: Buffer[] | null = null;
  /** undici's resume of a paused container socket, for a streamed answer. */
  #resumeUpstream: (() => void) | null = null;
  /** A streamed answer's head waits for its first piece (head-hold.ts). */
  #headHeld = false;
  /** The workload's metrics, when svc keeps them; set once the request's workload is known. */
  #meter: WorkloadMeter | null = null;
  readonly #arrivedAt = performance.now();
  #sentAt = 0;

  constructor(req: IncomingMessage, res: ServerResponse, requestId: string, report: ErrorReporter) {
    this.#req = req;
    this.#res = res;
    this.#requestId = requestId;
    this.#report = report;
    this.#isHead = req.method === 'HEAD';
    res.on('close', this.#onClose);
  }

  get request(): IncomingMessage {
    return this.#req;
  }

  get response(): ServerResponse {
    return this.#res;
  }

  get requestId(): string {
    return this.#requestId;
  }

  /** Aborted once the client has gone away. */
  get signal(): AbortSignal {
    return (this.#connection ??= connectionSignal(this.#req.socket));
  }

  /**
   * Keeps the slot until the response is done; gives it back at once if the
   * client already left. `crashCause` says why the slot's worker died, when
   * the driver knows (see upstreamError).
   */
  hold(slot: Slot, crashCause?: (instance: Instance) => SvcError | undefined): void {
    this.#crashCause = crashCause;
    if (this.#clientGone || this.#req.socket.destroyed) {
      slot.release();
      throw new SvcError('client_closed', 'the client went away before its request was sent on.');
    }
    this.#slot = slot;
    // A pipelined request's response waits behind the ones before it and has no socket yet; Node
    // never emits its 'close' when the connection closes meanwhile, so the slot would never come back.
    if (this.#res.socket === null) {
      this.#watchesConnection = true;
      this.signal.addEventListener('abort', this.#onClose, { once: true });
    }
  }

  /** Counts this request in the workload's metrics (`/metrics`). */
  meter(meter: WorkloadMeter): void {
    this.#meter = meter;
  }

  /** The request goes to the container now: its answer head times the upstream. */
  sent(): void {
    this.#sentAt = performance.now();
  }

  /** Answers with the error (or nothing, when the client is gone); see respond-error.ts. */
  fail(error: unknown): void {
    this.#meter?.failed(toSvcError(error).code);
    respondError(this.#res, error, this.#requestId, this.#report);
  }

  /** Bounds the call by the workload's time-out (undefined: unbounded); see call-timeout.ts. */
  bound(limit: CallLimit | undefined): void {
    if (limit === undefined) return;
    this.#deadline = new CallDeadline(limit, (error) => {
      // The container did not answer its own time-out: answer 504 for it, drop the connection to it.
      this.#expired = error;
      this.#abortUpstream?.(error);
    });
  }

  readonly #onClose = (): void => {
    if (this.#closed) return;
    this.#closed = true;
    this.#deadline?.clear();
    // The signal is shared by every request of the connection: leave no listener on it.
    if (this.#watchesConnection) this.#connection!.removeEventListener('abort', this.#onClose);
    if (!this.#res.writableFinished) {
      this.#clientGone = true;
      this.#abortUpstream?.();
    }
    this.#slot?.release();
    const meter = this.#meter;
    if (meter === null) return;
    // A socket handed on (an upgrade) or already released is gone from the request: no bytes to count.
    const socket = this.#req.socket as Socket | null;
    meter.answered(
      this.#clientGone ? 499 : this.#res.statusCode,
      (performance.now() - this.#arrivedAt) / 1000,
      socket === null ? 0 : bytesInSinceLast(socket),
      socket === null ? 0 : bytesOutSinceLast(socket),
    );
  };

  // undici's dispatch handler (its native interface in 7.x; the controller-style one is wrapped into it).

  onConnect(abort: (error?: Error) => void): void {
    if (this.#clientGone) abort();
    else if (this.#expired) abort(this.#expired);
    else this.#abortUpstream = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (statusCode < 200) return true; // 1xx: informational, not passed on
    if (this.#meter !== null && this.#sentAt > 0) this.#meter.upstream((performance.now() - this.#sentAt) / 1000);
    const head = responseHead(rawHeaders, this.#requestId);
    const length = head.contentLength;
    if (!this.#isHead && length >= 0 && length <= SMALL_BODY) {
      this.#status = statusCode;
      this.#headers = head.headers;
      this.#chunks = [];
      return true;
    }
    const res = this.#res;
    res.writeHead(statusCode, head.headers);
    // A stream of unknown length (SSE, chunked) may be slow to start: its head waits for its first piece only briefly.
    if (length < 0 && !this.#isHead && statusCode !== 204 && statusCode !== 304) this.#headHeld = holdHead(res);
    this.#resumeUpstream = resume;
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.#chunks !== null) {
      this.#chunks.push(chunk);
      return true;
    }
    if (this.#headHeld) {
      this.#headHeld = false;
      releaseHead(this.#res);
    }
    if (this.#res.write(chunk)) return true;
    // The client reads slower than the container writes: pause the container's socket until it drains.
    this.#res.once('drain', this.#resumeUpstream!);
    return false;
  }

  onComplete(): void {
    const res = this.#res;
    const chunks = this.#chunks;
    if (chunks === null) {
      if (this.#headHeld) forgetHead(res);
      res.end();
      return;
    }
    res.writeHead(this.#status, this.#headers!);
    if (chunks.length === 0) res.end();
    else res.end(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
  }

  onError(error: Error): void {
    // After the time-out, a broken connection is the runtime ending a stuck worker (or ours, the backstop).
    const expired = this.#clientGone ? undefined : (this.#expired ?? this.#deadline?.expired());
    if (expired) return this.fail(expired);
    const crashCause = this.#crashCause;
    const instance = this.#slot?.instance;
    this.fail(upstreamError(error, this.#clientGone, crashCause && instance ? () => crashCause(instance) : undefined));
  }
}
