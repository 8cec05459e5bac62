/**
 * A call's pickled body on its way to a container. A small body of declared
 * length (nearly every call: a few arguments) is read whole first and sent on
 * as one buffer: its container gets head and body in one write, with a
 * Content-Length rather than chunks, and no stream is piped for it. A larger
 * body, or one of unknown length, streams through with backpressure.
 */
import type { Readable } from 'node:stream';
import { SvcError } from '../../model/errors.js';

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

/**
 * The whole body (bounded by the API's body limit): each attempt of a retried call sends it again.
 * Read by its events: `stream/consumers` goes through a Blob, more than a small call itself costs.
 */
export function collect(body: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (body.destroyed) return reject(cutOff());
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer) => chunks.push(chunk);
    const settle = (error: Error | null) => {
      // The 'error' listener stays: an error after the end (the client leaving) must not go unheard.
      body.off('data', onData).off('end', onEnd).off('close', onClose);
      if (error !== null) reject(error);
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    const onEnd = () => settle(null);
    const onClose = () => settle(cutOff()); // closed before its end (an 'error' would have come first)
    body.on('data', onData).on('end', onEnd).on('error', settle).on('close', onClose);
  });
}

function cutOff(): Error {
  return new Error('the body was cut off before its end');
}

/** Reads and drops a body never sent on, so that the client's upload does not stall before it reads the error. */
export function dropBody(body: CallBody): void {
  if (!Buffer.isBuffer(body)) body.resume();
}
