/**
 * An answer's body written into a file, from its first byte to where the connection ended: what came is
 * written out even when the connection is cut (not dropped with the stream, as pipeline would), so that the
 * next download goes on from there.
 */
import { createWriteStream } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { finished as whenDone } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { OnBytes } from './request.js';

/** How much of a download the file's stream takes before it makes the socket wait. */
const WRITE_BUFFER_BYTES = 2 * 1024 * 1024;

/** Where the body goes: `flags: 'w'` for a new file, or `'r+'` and `start` for a span of one that has the file's size. */
export interface BodyTarget {
  readonly flags: 'w' | 'r+';
  readonly start?: number;
}

/**
 * Writes the body of `response` into `file`; resolves with the bytes written and, for a connection cut
 * before the body's end, why. A local failure (a full disk, no permission) rejects, the answer destroyed.
 */
export async function writeBody(
  response: IncomingMessage,
  file: string,
  target: BodyTarget,
  onBytes: OnBytes,
): Promise<{ written: number; cut: Error | null }> {
  // A buffer of 2 MiB: the socket's pieces are written together (writev) instead of pausing the download after 16 KiB.
  const written = createWriteStream(file, { highWaterMark: WRITE_BUFFER_BYTES, ...target });
  let cut: Error | null = null;
  const stopReading = (error: Error) => {
    if (cut !== null) return;
    cut = error;
    response.unpipe(written);
    written.end();
  };
  // An error, or a close before the end (destroyed because another part failed, or before this was
  // called at all: finished() tells a stream already closed too), is a cut.
  whenDone(response, (error) => {
    if (error) stopReading(error);
  });
  response.on('data', (chunk: Buffer) => onBytes(chunk.length));
  response.pipe(written);
  try {
    await finished(written);
  } catch (error) {
    response.destroy();
    throw error;
  }
  return { written: written.bytesWritten, cut };
}
