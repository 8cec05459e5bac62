/**
 * Request bodies, read as streams. Node's parser already holds a body to its
 * Content-Length (or chunked framing); a client that stops early makes the
 * read fail instead of yielding a short body.
 */
import type { IncomingMessage } from 'node:http';

export class BodyTooLarge extends Error {
  constructor() {
    super('http: request body too large');
  }
}

/** Reads the whole body; with `limit`, more than `limit` bytes is BodyTooLarge (Go's MaxBytesReader text). */
export function readBody(req: IncomingMessage, limit = Infinity): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        req.resume();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks));
    });
    req.on('aborted', () => reject(new Error('client disconnected')));
    req.on('error', (error) => reject(error));
  });
}
