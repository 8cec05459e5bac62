/**
 * Retries of a function's calls (`retries=` / `svc.Retries`): the server side
 * of a run runs a failed call again, because it is where a failure is known
 * (the last frame, a container that died, a time-out) and where the logs are;
 * `.remote()` only waits. A call failed when its last frame is an error (the
 * function raised, its worker died or timed out) or when an attempt could not
 * reach a container. Every failed attempt is said in the run's logs and to
 * the caller, as a log frame: attempt n of m, the error, the pause. The
 * caller's frames stream on as they come, attempt after attempt; only the
 * last attempt's final frame ends the answer.
 */
import { PassThrough, type Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { SvcError, toSvcError } from '../../model/errors.js';
import type { RetriesSpec } from '../../model/workload/types.js';
import { brokenCallFrame, type CallAnswer } from './types.js';

/** Failures of a later attempt that are the container's, not the run's: they are retried. */
const RETRIED_CODES = new Set(['worker_crashed', 'upstream_unreachable', 'memory_limit_exceeded', 'timeout']);

export interface RetriedCall {
  readonly retries: RetriesSpec;
  readonly workload: string;
  /** The whole pickled call: each attempt sends it again. */
  readonly body: Buffer;
  /** One attempt: a slot, and the container's answer. */
  readonly attempt: (body: Buffer) => Promise<CallAnswer>;
  /** The caller went away: no more attempts. */
  readonly signal: AbortSignal;
  /** A line for the run's logs. */
  readonly log: (text: string) => void;
}

/** Seconds before retry `retry` (1 for the first): the back-off, bounded by `maxDelay`. */
export function retryDelay(retries: RetriesSpec, retry: number): number {
  return Math.min(retries.initialDelay * retries.backoffCoefficient ** (retry - 1), retries.maxDelay);
}

/** The head of a frame stream that begins before any container answered (the first attempt found none). */
const FRAME_HEADERS = { 'content-type': 'application/x-ndjson', 'cache-control': 'no-cache' };

/**
 * Sends the call, and again while it fails and retries are left. The first
 * attempt's errors that are not the container's (no slot, the run ended) and a
 * non-frame answer are the caller's at once, as without retries; from then on
 * the answer is one frame stream.
 */
export async function callWithRetries(call: RetriedCall): Promise<CallAnswer> {
  const first = await attemptOrFailure(call);
  if (!(first instanceof SvcError) && first.status !== 200) return first;
  const out = new PassThrough();
  void relayAttempts(call, first, out).catch((error: unknown) => {
    if (!out.destroyed) out.end(brokenCallFrame(toSvcError(error)));
  });
  return { status: 200, headers: first instanceof SvcError ? FRAME_HEADERS : first.headers, body: out };
}

/** One attempt's answer, or the error of one that found no working container (retried); other errors are thrown. */
async function attemptOrFailure(call: RetriedCall): Promise<CallAnswer | SvcError> {
  try {
    return await call.attempt(call.body);
  } catch (thrown) {
    const error = toSvcError(thrown);
    if (!RETRIED_CODES.has(error.code)) throw error;
    return error;
  }
}

interface Outcome {
  /** The final frame's line, newline included. */
  readonly last: string;
  /** What failed (`Type: message`, or `code: message`), or null for a result. */
  readonly failure: string | null;
}

async function relayAttempts(call: RetriedCall, first: CallAnswer | SvcError, out: PassThrough): Promise<void> {
  const attempts = call.retries.maxRetries + 1;
  const say = (text: string) => {
    call.log(`${call.workload}: ${text}`);
    if (!out.destroyed) out.write(`${JSON.stringify({ type: 'log', stream: 'stderr', line: `svc: ${text}` })}\n`);
  };
  for (let n = 1; ; n++) {
    const outcome = await attemptOutcome(call, n === 1 ? first : null, out);
    if (outcome === null) return; // the caller went away
    if (outcome.failure === null) {
      if (n > 1) say(`attempt ${n} of ${attempts} succeeded`);
      out.end(outcome.last);
      return;
    }
    if (n === attempts) {
      say(`attempt ${n} of ${attempts} failed (${outcome.failure}); no retries left`);
      out.end(outcome.last);
      return;
    }
    const delay = retryDelay(call.retries, n);
    // Rounded for the line only (0.1 × 3 is 0.30000000000000004 in floating point).
    say(`attempt ${n} of ${attempts} failed (${outcome.failure}); retrying in ${Number(delay.toFixed(3))} s`);
    try {
      await sleep(delay * 1000, undefined, { signal: call.signal });
    } catch {
      return; // the caller went away while waiting
    }
    if (out.destroyed) return;
  }
}

/** One attempt's frames, passed on, and how it ended; null when the caller left meanwhile. */
async function attemptOutcome(call: RetriedCall, answered: CallAnswer | SvcError | null, out: PassThrough): Promise<Outcome | null> {
  const answer = answered ?? (await attemptOrFailure(call));
  if (answer instanceof SvcError) return { last: brokenCallFrame(answer), failure: `${answer.code}: ${answer.message}` };
  const last = await passLogFrames(answer.body, out);
  if (out.destroyed) return null;
  if (last === null) {
    const error = new SvcError('worker_crashed', 'the answer of the container ended without a result or an error.');
    return { last: brokenCallFrame(error), failure: `${error.code}: ${error.message}` };
  }
  const failure = last.frame.type === 'result' ? null : String(last.frame.exception ?? last.frame.code ?? 'error');
  return { last: `${last.line}\n`, failure };
}

interface Frame {
  readonly type?: unknown;
  readonly exception?: unknown;
  readonly code?: unknown;
}

function parseFrame(line: string): Frame {
  try {
    const frame: unknown = JSON.parse(line);
    if (typeof frame === 'object' && frame !== null) return frame as Frame;
  } catch {
    // not JSON: below
  }
  return { type: 'error', exception: 'a frame that is not JSON' };
}

/** Writes the attempt's log frames to `out` as they come; returns its final frame, or null when there was none. */
async function passLogFrames(body: Readable, out: PassThrough): Promise<{ line: string; frame: Frame } | null> {
  const stop = () => body.destroy();
  out.once('close', stop);
  let last: { line: string; frame: Frame } | null = null;
  try {
    for await (const line of createInterface({ input: body, crlfDelay: Infinity })) {
      if (line === '') continue;
      const frame = parseFrame(line);
      if (frame.type === 'log') out.write(`${line}\n`);
      else last = { line, frame };
    }
  } catch {
    // The answer broke off: call-stream.ts ends a broken answer with its own frame, so only the client leaving lands here.
  } finally {
    out.off('close', stop);
  }
  return last;
}
