/**
 * One map: its inputs taken in batches, dispatched as calls of its run
 * (RunManager.call: admission, retries, time-outs, crash frames, exactly as
 * a `.remote()`), at most `window` at once (window.ts), and their frames
 * relayed, each with its input's index, to the map's one reader
 * (output-buffer.ts) in the order they happen.
 *
 * Backpressure both ways: a batch's request is answered once all its inputs
 * are in the window (so the client sends the next batch only then), and the
 * map starts no input while its outputs wait unread past the buffer's high
 * water. Cancelling it (DELETE, its run ending, nobody reading for
 * `unreadMs`) cancels the inputs not started; those running finish and
 * their frames still go out; then the end frame.
 */
import type { Readable } from 'node:stream';
import { SvcError } from '../../model/errors.js';
import type { CallAnswer, CallOptions, RunAttachment } from '../runs/types.js';
import { errorFrame, relayAnswer, type FrameSink, type Outcome } from './answer-frames.js';
import { parseBatch } from './input-batch.js';
import { OutputBuffer } from './output-buffer.js';
import type { CancelReason, MapInput, MapStatus, MapView } from './types.js';
import { MAX_WINDOW_BYTES, windowSize } from './window.js';

/** One call of the map's run: RunManager.call for this run. */
export type MapCall = (body: Buffer, signal: AbortSignal, requestId: string, options: CallOptions) => Promise<CallAnswer>;

export interface FanOutOptions {
  readonly id: string;
  readonly workspace: string;
  readonly run: string;
  readonly attachment: RunAttachment;
  readonly call: MapCall;
  /** How long the map runs with nobody reading its outputs before it is cancelled (its caller died). */
  readonly unreadMs: number;
  /** The map ended: its last input was answered, or, cancelled, the last one running ended. */
  readonly onEnd: () => void;
  /** An input was answered (`/metrics` counts them). */
  readonly onAnswer?: (outcome: 'succeeded' | 'failed') => void;
}

/** A batch whose inputs wait for room in the window; its request is answered when the last one is in. */
interface Batch {
  readonly inputs: (MapInput | undefined)[];
  taken: number;
  readonly done: () => void;
}

/**
 * Map inputs are bounded by the window, not by `max_pending_tasks`: the whole
 * window may queue, and other callers of the run still see their own bound.
 */
const MAP_CALL: CallOptions = { maxPending: Number.MAX_SAFE_INTEGER, waitTimeout: false };

export class FanOut {
  readonly id: string;
  readonly workspace: string;
  readonly run: string;
  readonly #options: FanOutOptions;
  readonly #createdAt = new Date();
  readonly #window: number;
  readonly #output: OutputBuffer;
  #status: MapStatus = 'running';
  #cancelReason: CancelReason | null = null;
  #endedAt: Date | null = null;
  #received = 0;
  #running = 0;
  #succeeded = 0;
  #failed = 0;
  #cancelled = 0;
  /** The index the next input must have: the map keeps no other trace of the inputs it took. */
  #next = 0;
  #last = false;
  #batch: Batch | null = null;
  /** Inputs in the window: calls not over yet, and the bytes of their pickles. */
  #dispatched = 0;
  #dispatchedBytes = 0;
  /** Calls not started yet (waiting for the run or a slot): what a cancel aborts. */
  readonly #waiting = new Map<number, AbortController>();
  #unread: NodeJS.Timeout | undefined;
  /** Answers not read further until the reader catches up (output-buffer.ts `overLimit`). */
  readonly #paused: (() => void)[] = [];

  constructor(options: FanOutOptions) {
    this.#options = options;
    this.id = options.id;
    this.workspace = options.workspace;
    this.run = options.run;
    this.#window = windowSize(options.attachment.workload.scaling);
    this.#output = new OutputBuffer({
      highWaterLines: 2 * this.#window,
      onDrain: () => this.#drained(),
      onReader: (attached) => this.#watchReader(attached),
      endLine: () => `${JSON.stringify({ type: 'end', map: this.view() })}\n`,
    });
    this.#watchReader(false);
    const { ended } = options.attachment;
    if (ended.aborted) this.cancel('run_ended');
    else ended.addEventListener('abort', this.#runEnded, { once: true });
  }

  readonly #runEnded = () => this.cancel('run_ended');

  get status(): MapStatus {
    return this.#status;
  }

  view(): MapView {
    const answered = this.#running + this.#succeeded + this.#failed + this.#cancelled;
    return {
      id: this.id,
      run: this.run,
      function: this.#options.attachment.workload.name,
      status: this.#status,
      cancelReason: this.#cancelReason,
      inputs: {
        received: this.#received,
        queued: this.#received - answered,
        running: this.#running,
        succeeded: this.#succeeded,
        failed: this.#failed,
        cancelled: this.#cancelled,
      },
      lastReceived: this.#last,
      createdAt: this.#createdAt.toISOString(),
      endedAt: this.#endedAt?.toISOString() ?? null,
    };
  }

  /**
   * Takes a batch (checked whole: input-batch.ts) and resolves once all its
   * inputs are in the window, or the map was cancelled meanwhile. `conflict`
   * when the map takes no more inputs, or another batch still waits.
   */
  take(body: Buffer, last: boolean): Promise<void> {
    this.#refuseInputs();
    const inputs = parseBatch(body, this.#next);
    this.#next += inputs.length;
    this.#received += inputs.length;
    this.#last = last;
    if (inputs.length === 0) {
      this.#checkEnd();
      return Promise.resolve();
    }
    return new Promise<void>((done) => {
      this.#batch = { inputs, taken: 0, done };
      this.#pump();
    });
  }

  /** The outputs' one reader; `conflict` while another is connected. */
  reader(): Readable {
    return this.#output.attach();
  }

  /** Cancels the inputs not started; those running finish, and their frames still go to the reader. */
  cancel(reason: CancelReason): void {
    if (this.#status !== 'running') return;
    this.#status = 'cancelled';
    this.#cancelReason = reason;
    const batch = this.#batch;
    if (batch !== null) {
      this.#batch = null;
      this.#cancelled += batch.inputs.length - batch.taken;
      batch.done();
    }
    // Counted at once, so that the answer to DELETE already says so; their calls give up their places as they abort.
    this.#cancelled += this.#waiting.size;
    for (const controller of this.#waiting.values()) controller.abort();
    this.#waiting.clear();
    this.#checkEnd();
  }

  #refuseInputs(): void {
    const hint = 'Create a new map for more inputs (POST /api/v1/runs/<id>/maps).';
    if (this.#status !== 'running')
      throw new SvcError('conflict', `the map ${this.id} is ${this.#status}; it takes no more inputs.`, {
        hint,
        details: { status: this.#status },
      });
    if (this.#last) throw new SvcError('conflict', `the map ${this.id} already received its last input (last=true).`, { hint });
    if (this.#batch !== null) {
      throw new SvcError('conflict', `a batch of the map ${this.id} is still waiting for room; send the next one once it is answered.`, {
        hint: 'Send batches one after the other: the answer to a batch comes when all its inputs were taken.',
      });
    }
  }

  /** Starts inputs while the window, its bytes and the reader's buffer have room. */
  #pump(): void {
    while (this.#status === 'running' && this.#batch !== null && this.#dispatched < this.#window && !this.#output.full) {
      const batch = this.#batch;
      const input = batch.inputs[batch.taken]!;
      if (this.#dispatched > 0 && this.#dispatchedBytes + input.pickle.length > MAX_WINDOW_BYTES) return;
      batch.inputs[batch.taken++] = undefined; // the window holds it now; the batch lets go
      this.#dispatch(input);
      if (batch.taken === batch.inputs.length) {
        this.#batch = null;
        batch.done();
      }
    }
  }

  #dispatch({ index, pickle }: MapInput): void {
    const controller = new AbortController();
    this.#waiting.set(index, controller);
    this.#dispatched++;
    this.#dispatchedBytes += pickle.length;
    /** The call is over; `null`: it was cancelled before it started, and counted then. */
    const settle = (outcome: Outcome | null) => {
      if (outcome === 'result') this.#succeeded++;
      else if (outcome === 'error') this.#failed++;
      if (outcome !== null) this.#options.onAnswer?.(outcome === 'result' ? 'succeeded' : 'failed');
      this.#dispatched--;
      this.#dispatchedBytes -= pickle.length;
      this.#pump();
      this.#checkEnd();
    };
    this.#options.call(pickle, controller.signal, `${this.id}/${index}`, MAP_CALL).then(
      (answer) => {
        this.#waiting.delete(index);
        if (controller.signal.aborted) {
          answer.body.destroy(); // cancelled as it started: it never ran for the reader
          return settle(null);
        }
        this.#running++;
        void relayAnswer(answer, index, this.#sink).then((outcome) => {
          this.#running--;
          settle(outcome);
        });
      },
      (error: unknown) => {
        this.#waiting.delete(index);
        if (controller.signal.aborted) return settle(null);
        this.#output.push(errorFrame(index, error));
        settle('error');
      },
    );
  }

  /** Where relayed answers write: the output buffer; an answer read past its limit waits for the reader. */
  readonly #sink: FrameSink = {
    push: (line) => this.#output.push(line),
    overLimit: () => this.#output.overLimit,
    whenDrained: (resume) => this.#paused.push(resume),
  };

  /** The reader caught up: paused answers are read again, and inputs start again. */
  #drained(): void {
    for (const resume of this.#paused.splice(0)) resume();
    this.#pump();
  }

  #checkEnd(): void {
    if (this.#endedAt !== null) return;
    const answered = this.#succeeded + this.#failed + this.#cancelled === this.#received;
    if (this.#status === 'running' && this.#last && answered) this.#status = 'succeeded';
    if (this.#status === 'running' || this.#dispatched > 0) return;
    this.#endedAt = new Date();
    this.#options.attachment.ended.removeEventListener('abort', this.#runEnded);
    this.#options.attachment.release();
    this.#output.end();
    this.#watchReader(this.#output.reading);
    this.#options.onEnd();
  }

  /** Nobody reads the outputs: after `unreadMs` a running map is cancelled, and what waits for a reader goes. */
  #watchReader(attached: boolean): void {
    clearTimeout(this.#unread);
    this.#unread = undefined;
    if (attached || this.#output.drained) return;
    this.#unread = setTimeout(() => {
      this.cancel('unread');
      this.#output.drop();
    }, this.#options.unreadMs);
    this.#unread.unref();
  }

  /** Forgotten by its manager: no timer is left behind. */
  close(): void {
    clearTimeout(this.#unread);
  }
}
