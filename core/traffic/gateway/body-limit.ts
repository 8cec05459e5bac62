import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform, type Readable } from 'node:stream';
import { SvcError } from '../../model/errors.js';

/** Largest request body the gateway forwards unless configured otherwise: 32 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;

/** How long the gateway keeps reading (and discarding) a refused body so that the client sees the 413. */
const LINGER_MS = 5_000;

/**
 * Refuses a declared `Content-Length` above the limit before anything is
 * read or forwarded. Node's parser already guarantees a body never exceeds
 * the length it declares, so such bodies need no counting afterwards.
 */
export function checkContentLength(declared: string | undefined, req: IncomingMessage, res: ServerResponse, maxBytes: number): void {
  if (declared === undefined || Number(declared) <= maxBytes) return;
  discardRestAfterAnswer(req, res);
  throw payloadTooLarge(maxBytes);
}

/**
 * The body to forward when no length was declared (chunked): a stream that
 * fails with `payload_too_large` once more than `maxBytes` went through,
 * which aborts the upstream request. A body of declared length is forwarded
 * as the request itself (checkContentLength judged it).
 */
export function countedBody(req: IncomingMessage, res: ServerResponse, maxBytes: number): Readable {
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen <= maxBytes) return done(null, chunk);
      discardRestAfterAnswer(req, res); // unpipes the counter too
      done(payloadTooLarge(maxBytes));
    },
  });
  // pipe() does not pass errors on (and pipeline() would destroy the socket the 413 must go out on).
  req.once('error', (error) => counter.destroy(error));
  // A reader that stopped early (a refused upload) no longer listens: a later failure of the body (the
  // client going, the limit passed) must not be an unhandled 'error' that takes the server down.
  counter.on('error', () => {});
  return req.pipe(counter);
}

/**
 * The whole body, refused with `payload_too_large` once more than `maxBytes` arrived: read from
 * the request's own events, without the stream and async iterator of `countedBody` (a small API
 * body, already in the socket's first read, is then taken in the same turn of the event loop).
 */
export function readWholeBody(req: IncomingMessage, res: ServerResponse, maxBytes: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let seen = 0;
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen <= maxBytes) return void chunks.push(chunk);
      stop();
      discardRestAfterAnswer(req, res);
      reject(payloadTooLarge(maxBytes));
    };
    const onEnd = () => {
      stop();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    const stop = () => {
      req.off('data', onData).off('end', onEnd).off('error', onError);
    };
    req.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/** Requests whose rest is already being thrown away. */
const discarding = new WeakSet<IncomingMessage>();

/**
 * Once the 413 (or any answer to a refused body) is out, reads and throws away what the client still sends,
 * for at most LINGER_MS, then closes the connection. Closing at once would
 * make many clients fail with EPIPE before they read the answer (nginx's
 * "lingering close"); reading without a bound would let one client keep
 * the gateway busy with a body it already refused.
 */
export function discardRestAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  if (discarding.has(req)) return;
  discarding.add(req);
  // Whatever the body was piped into (a counted body its reader left) reads no more of it.
  req.unpipe();
  res.once('finish', () => {
    if (req.complete) return;
    const timer = setTimeout(() => req.socket.destroy(), LINGER_MS).unref();
    req.once('end', () => clearTimeout(timer));
    req.resume();
  });
}

function payloadTooLarge(maxBytes: number): SvcError {
  return new SvcError('payload_too_large', `the request body is larger than the ${formatBytes(maxBytes)} this gateway accepts.`, {
    hint: 'Send a smaller body, or pass large data by reference (a URL or a storage key).',
  });
}

function formatBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
