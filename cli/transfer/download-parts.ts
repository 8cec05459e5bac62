/**
 * A file fetched in parts, several at once, each over a connection of its own (`Range` with `If-Range`
 * naming the file's ETag) and written where it belongs in the partial file, which has the file's size from
 * the start. After each part, the spans written so far are recorded (`.parts`, partial-download.ts): a
 * download cut off goes on from every byte that was written, whatever the order they came in.
 */
import { constants as fsConstants } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import type { ApiClient } from '../api-client.js';
import {
  bytesIn,
  discard,
  missingSpans,
  type PartialFiles,
  type PartsRecord,
  type Spans,
  saveParts,
  stoppedAfter,
  withSpan,
} from './partial-download.js';
import { answerTo, contentRange, type OnBytes, textOf } from './request.js';
import { writeBody } from './write-body.js';

export interface PartsJob {
  readonly client: ApiClient;
  readonly path: string;
  readonly files: PartialFiles;
  readonly etag: string;
  readonly size: number;
  /** The spans already in the partial file. */
  readonly done: Spans;
  /** The answer to the first request: the part from `start` to `end` (inclusive). */
  readonly first: { readonly response: IncomingMessage; readonly start: number; readonly end: number };
  readonly partBytes: number;
  readonly connections: number;
  readonly onBytes: OnBytes;
}

/** Why the parts stopped before all of them came. */
type Stop =
  | { readonly kind: 'cut'; readonly error: Error | null } // the network: what came is kept
  | { readonly kind: 'changed' } // a part of another version of the file: start over
  | { readonly kind: 'failed'; readonly error: unknown; readonly keep: boolean }; // refused (kept), or a local failure (not)

/**
 * Fetches every span of the file not in `done`; 'done' once the partial file has all of it, 'changed' when
 * the file changed on the server meanwhile (the partial file removed: the caller starts over). A connection
 * cut off throws `server_unreachable` once the other parts in flight ended, with what came recorded.
 */
export async function fetchParts(job: PartsJob): Promise<'done' | 'changed'> {
  const { files, first, size, etag } = job;
  await sizePartial(files, { etag, size, done: job.done });
  let done = job.done;
  const queue = slices(missingSpans(withSpan(done, first.start, first.end + 1), size), job.partBytes);
  const inFlight = new Set<IncomingMessage>();
  let stop: Stop | null = null;
  const stopWith = (why: Stop) => {
    stop ??= why;
    // Another version, or a local failure: the other parts are of no use. A cut: they finish what they can.
    if (why.kind !== 'cut') for (const response of inFlight) response.destroy();
  };
  let recording: Promise<void> = Promise.resolve();
  const record = (start: number, written: number) => {
    done = withSpan(done, start, start + written);
    const next = { etag, size, done };
    recording = recording.then(() => saveParts(files, next));
    return recording;
  };
  const take = async (response: IncomingMessage, start: number, end: number) => {
    inFlight.add(response);
    try {
      const { written, cut } = await writeBody(response, files.partial, { flags: 'r+', start }, job.onBytes);
      await record(start, written);
      if (cut !== null || written < end + 1 - start) stopWith({ kind: 'cut', error: cut });
    } catch (error) {
      stopWith({ kind: 'failed', error, keep: false });
    } finally {
      inFlight.delete(response);
    }
  };
  const fetchOne = async (start: number, end: number) => {
    let response: IncomingMessage;
    try {
      response = await answerTo(job.client, job.path, {
        Accept: 'application/octet-stream',
        Range: `bytes=${start}-${end}`,
        'If-Range': etag,
      });
    } catch (error) {
      return stopWith({ kind: 'cut', error: error as Error });
    }
    if (stop !== null) return void response.destroy();
    const status = response.statusCode ?? 0;
    const range = contentRange(response);
    if (status === 206 && range?.start === start && range.end === end && range.total === size) return take(response, start, end);
    if (status === 200 || status === 206 || status === 416) {
      response.destroy();
      return stopWith({ kind: 'changed' });
    }
    stopWith({ kind: 'failed', error: job.client.errorFrom(status, await textOf(response).catch(() => ''), 'GET', job.path), keep: true });
  };
  const connection = async () => {
    for (let slice = queue.shift(); slice !== undefined && stop === null; slice = queue.shift()) await fetchOne(...slice);
  };
  // The first answer's connection goes on with the next parts once it has its own.
  const firstThenMore = take(first.response, first.start, first.end).then(connection);
  await Promise.all([firstThenMore, ...Array.from({ length: job.connections - 1 }, connection)]);
  await recording.catch(() => {});
  return outcome(job, stop as Stop | null, done);
}

/**
 * The partial file at the file's size (holes where nothing came yet), with its first `.parts` record. The
 * `.etag` record says the partial file is a beginning: it goes before any byte is written out of order.
 */
async function sizePartial(files: PartialFiles, record: PartsRecord): Promise<void> {
  await unlink(files.etag).catch(() => {});
  const handle = await open(files.partial, fsConstants.O_RDWR | fsConstants.O_CREAT);
  try {
    await handle.truncate(record.size);
  } finally {
    await handle.close();
  }
  await saveParts(files, record);
}

/** What the parts came to, once none is in flight: all of the file, another version of it, or a stop. */
async function outcome(job: PartsJob, stopped: Stop | null, done: Spans): Promise<'done' | 'changed'> {
  if (stopped === null) {
    // Never renamed with a hole in it: every span must have been written.
    if (bytesIn(done) !== job.size)
      throw new Error(`fetchParts: ${job.size - bytesIn(done)} bytes of ${job.files.partial} were never fetched`);
    return 'done';
  }
  if (stopped.kind === 'changed') {
    await discard(job.files);
    return 'changed';
  }
  if (stopped.kind === 'failed') {
    if (!stopped.keep) await discard(job.files);
    throw stopped.error;
  }
  throw stoppedAfter(job.client, bytesIn(done), stopped.error, job.files.partial);
}

/** `spans` cut into inclusive `[start, end]` slices of at most `bytes` each. */
function slices(spans: Spans, bytes: number): [number, number][] {
  const cut: [number, number][] = [];
  for (const [start, end] of spans) for (let at = start; at < end; at += bytes) cut.push([at, Math.min(end, at + bytes) - 1]);
  return cut;
}
