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
 */
import { PassThrough } from 'node:stream';
import type { Slot } from '../gateway/admission.js';
import { CallDeadline, type CallLimit } from '../gateway/call-timeout.js';
import type { SvcError } from '../errors.js';
import type { UpstreamPools } from '../gateway/proxy.js';
import { upstreamError } from '../gateway/upstream-error.js';
import type { CallBody } from './call-body.js';
import { brokenCallFrame, type CallAnswer } from './types.js';

export const CALL_CONTENT_TYPE = 'application/vnd.svc.call+pickle';

/** Answer headers passed on from the container. */
const PASSED_ON = ['content-type', 'cache-control'];

export async function sendCall(upstreams: Pick<UpstreamPools, 'request' | 'crashCause'>, slot: Slot, body: CallBody, signal: AbortSignal, requestId: string, limit?: CallLimit): Promise<CallAnswer> {
  const crashCause = () => upstreams.crashCause(slot.instance);
  // The backstop of the call's time-out: it cuts the request, or (once answering) the answer.
  const cut = new AbortController();
  let expired: SvcError | undefined;
  let onBackstop = (error: SvcError) => cut.abort(error);
  const deadline = limit && new CallDeadline(limit, (error) => {
    expired = error;
    onBackstop(error);
  });
  let response;
  try {
    response = await upstreams.request(slot.instance, {
      method: 'POST',
      path: '/',
      headers: { 'content-type': CALL_CONTENT_TYPE, 'x-request-id': requestId },
      body,
      signal: AbortSignal.any([signal, cut.signal]),
    });
  } catch (error) {
    deadline?.clear();
    slot.release();
    throw expired ?? upstreamError(error, signal.aborted, crashCause);
  }
  const out = new PassThrough();
  const upstream = response.body;
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    deadline?.clear();
    slot.release();
  };
  onBackstop = (error) => upstream.destroy(error);
  upstream.on('error', (error) => {
    release();
    if (out.destroyed) return;
    // Only a 200 answer is a frame stream; any other answer just ends short. Past the time-out, a broken
    // connection is the runtime ending a stuck worker (or the backstop's cut): a time-out, not a crash.
    const why = signal.aborted ? undefined : (expired ?? deadline?.expired());
    if (response.statusCode === 200) out.end(brokenCallFrame(why ?? upstreamError(error, signal.aborted, crashCause)));
    else out.end();
  });
  upstream.on('end', release);
  upstream.on('close', release);
  // The client went away (Koa destroys the body): the container's answer is not read any further.
  out.on('close', () => {
    release();
    if (!upstream.destroyed) upstream.destroy();
  });
  upstream.pipe(out);
  const headers: Record<string, string> = {};
  for (const name of PASSED_ON) {
    const value = response.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  return { status: response.statusCode, headers, body: out };
}
