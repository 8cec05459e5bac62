/**
 * A call's pickled body on its way to a container. A small body of declared
 * length (nearly every call: a few arguments) is read whole first and sent on
 * as one buffer: its container gets head and body in one write, with a
 * Content-Length rather than chunks, and no stream is piped for it. A larger
 * body, or one of unknown length, streams through with backpressure.
 */
import type { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { SvcError } from '../errors.js';

export type CallBody = Readable | Buffer;

/** Declared lengths up to this are read whole before the call is sent on. */
export const WHOLE_BODY_BYTES = 64 * 1024;

/** The body as the API received it: read whole when it declares a small length, else the stream itself. */
export async function receivedBody(body: Readable, declaredLength: string | undefined, signal: AbortSignal): Promise<CallBody> {
  const length = declaredLength === undefined ? NaN : Number(declaredLength);
  if (!(length <= WHOLE_BODY_BYTES)) return body;
  try {
    return await collect(body);
  } catch (error) {
    if (signal.aborted) throw new SvcError('client_closed', 'the client went away while it sent its call.');
    throw error;
  }
}

/** The whole body (bounded by the API's body limit): each attempt of a retried call sends it again. */
export function collect(body: Readable): Promise<Buffer> {
  return buffer(body);
}

/** Reads and drops a body never sent on, so that the client's upload does not stall before it reads the error. */
export function dropBody(body: CallBody): void {
  if (!Buffer.isBuffer(body)) body.resume();
}
