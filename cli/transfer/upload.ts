/**
 * Files to and from the API, streamed with Node's own HTTP client: fetch (undici) reads a request
 * body ahead of what the socket takes, so an upload of a large file ended up in memory whole (a
 * file of 256 MiB took 330 MiB of the CLI's); a plain request is written a piece at a time, each once
 * the socket took the last (core/infra/files/file-range-stream.ts), so memory stays flat whatever the
 * file's size. Downloads are piped into a file beside the target, renamed onto it once complete.
 */
import { createWriteStream } from 'node:fs';
import { link, open, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { finished } from 'node:stream/promises';
import { FileRangeStream } from '../core/infra/files/file-range-stream.js';
import { SvcError } from '../core/model/errors.js';
import type { ApiClient } from './api-client.js';

function requestTo(client: ApiClient, method: string, path: string, headers: Record<string, string>): http.ClientRequest {
  const url = new URL(`${client.server}${path}`);
  return (url.protocol === 'https:' ? https : http).request(url, { method, headers: { ...client.authorization(), ...headers } });
}

async function textOf(response: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of response) text += (chunk as Buffer).toString();
  return text;
}

/** Told how many more bytes moved, as they move (a progress bar). */
export type OnBytes = (bytes: number) => void;

/** How much of a download the file's stream takes before it makes the socket wait. */
const WRITE_BUFFER_BYTES = 4 * 1024 * 1024;

/** PUTs `file` to `path` as `application/octet-stream`; the answer's JSON, or the SvcError the server meant. */
export async function uploadFile(client: ApiClient, path: string, file: string, onBytes: OnBytes = () => {}): Promise<unknown> {
  const handle = await open(file, 'r');
  let size: number;
  let request: http.ClientRequest;
  try {
    size = (await handle.stat()).size;
    request = requestTo(client, 'PUT', path, {
      'Content-Type': 'application/octet-stream',
      'Content-Length': String(size),
      Accept: 'application/json',
    });
  } catch (error) {
    await handle.close();
    throw error;
  }
  const answered = new Promise<IncomingMessage>((resolve, reject) => {
    request.once('response', resolve);
    request.once('error', reject);
  });
  answered.catch(() => {});
  let sent: unknown = null;
  request.on('error', (error) => {
    sent ??= error;
  });
  // The server may answer before the whole body went (volume_full, a refused path): its answer is what counts.
  // The file goes through a few buffers read into again and again: a new one per piece made the
  // CLI's memory grow by 40-50 MiB over a 2 GiB upload before V8 collected them.
  await new FileRangeStream(handle, 0, size - 1).writeTo(request, onBytes);
  const response = await answered.catch((error: unknown) => {
    throw client.unreachable({ message: (error as Error).message, cause: sent ?? error });
  });
  const text = await textOf(response);
  const status = response.statusCode ?? 0;
  if (status < 200 || status >= 300) throw client.errorFrom(status, text, 'PUT', path);
  return JSON.parse(text) as unknown;
}

/** Told once where a download resumed (bytes already on disk), before any bytes move. */
export type OnResume = (bytes: number) => void;

/**
 * GETs `path` into `to`: into `<to>.svc-partial` first, renamed onto `to` once all of it came (its size
 * checked). A download cut off by the network keeps its partial file, with the file's ETag beside it
 * (`<to>.svc-partial.etag`); the next download into `to` asks only for the rest (`Range`, with `If-Range`
 * naming that ETag) and appends it, or starts over when the file changed meanwhile (the server then answers
 * it whole) or the answer is not the rest. One download into `to` at a time (`<to>.svc-partial.lock`).
 */
export async function downloadFile(
  client: ApiClient,
  path: string,
  to: string,
  onBytes: OnBytes = () => {},
  onResume: OnResume = () => {},
): Promise<void> {
  const release = await lockDownload(to);
  try {
    await fetchInto(client, path, to, onBytes, onResume, true);
  } finally {
    await release();
  }
}

async function fetchInto(
  client: ApiClient,
  path: string,
  to: string,
  onBytes: OnBytes,
  onResume: OnResume,
  mayResume: boolean,
): Promise<void> {
  const partial = `${to}.svc-partial`;
  const etagFile = `${partial}.etag`;
  const resumable = mayResume ? await resumePoint(partial, etagFile) : null;
  const headers: Record<string, string> = { Accept: 'application/octet-stream' };
  if (resumable !== null) Object.assign(headers, { Range: `bytes=${resumable.bytes}-`, 'If-Range': resumable.etag });
  const request = requestTo(client, 'GET', path, headers);
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    request.once('response', resolve);
    request.once('error', reject);
    request.end();
  }).catch((error: unknown) => {
    throw client.unreachable({ message: (error as Error).message, cause: error });
  });
  const status = response.statusCode ?? 0;
  const range = contentRange(response);
  if (resumable !== null && (status === 416 || (status === 206 && !(range?.start === resumable.bytes && range.end === range.total - 1)))) {
    response.resume();
    // 416 for a partial file as long as the file under the same ETag: all of it came, only the rename did not.
    if (status === 416 && range?.total === resumable.bytes) return finish(partial, etagFile, to, resumable.bytes);
    await discard(partial, etagFile); // not a beginning of this file, or not the rest asked for: start over
    return fetchInto(client, path, to, onBytes, onResume, false);
  }
  if (status !== 200 && !(status === 206 && resumable !== null)) {
    throw client.errorFrom(status, await textOf(response), 'GET', path);
  }
  const appending = status === 206;
  const total = appending ? range!.total : Number(response.headers['content-length'] ?? Number.NaN);
  // A weak ETag (a proxy's) never matches If-Range: nothing to resume against, so none is kept.
  const etag = typeof response.headers.etag === 'string' && !response.headers.etag.startsWith('W/') ? response.headers.etag : null;
  if (appending) onResume(resumable!.bytes);
  else if (etag !== null) await writeFile(etagFile, etag);
  else await unlink(etagFile).catch(() => {});
  response.on('data', (chunk: Buffer) => onBytes(chunk.length));
  // A buffer of 4 MiB: the socket's pieces are written together (writev) instead of pausing the download after 16 KiB.
  const written = createWriteStream(partial, { highWaterMark: WRITE_BUFFER_BYTES, flags: appending ? 'a' : 'w' });
  // Cut off by the network: what came is still written out (not dropped with the stream, as pipeline would), then kept.
  let cut: Error | null = null;
  response.once('error', (error) => {
    cut = error;
    response.unpipe(written);
    written.end();
  });
  response.pipe(written);
  try {
    await finished(written);
  } catch (error) {
    // A local failure (a full disk, no permission): nothing is left.
    response.destroy();
    await discard(partial, etagFile);
    throw error;
  }
  const kept = await sizeOf(partial);
  if (cut !== null || (Number.isFinite(total) && kept < total)) {
    // Kept where the file has an ETag to check the rest against; else nothing is left.
    if (etag === null && !appending) await discard(partial, etagFile);
    const why = (cut as Error | null)?.message ?? 'the connection ended early';
    throw new SvcError('server_unreachable', `the download from ${client.server} stopped after ${kept} bytes (${why}).`, {
      hint:
        etag === null && !appending
          ? 'Run the same command again; it starts over.'
          : `Run the same command again: it goes on from there (the bytes so far are in ${partial}).`,
      ...(cut === null ? {} : { cause: cut }),
    });
  }
  await finish(partial, etagFile, to, Number.isFinite(total) ? total : null);
}

/** Renames the complete partial file onto `to`, once it has the size the server gave (when it gave one). */
async function finish(partial: string, etagFile: string, to: string, total: number | null): Promise<void> {
  const size = await sizeOf(partial);
  if (total !== null && size !== total) {
    await discard(partial, etagFile);
    throw new SvcError('unexpected_response', `the download into ${to} has ${size} bytes where the server announced ${total}.`, {
      hint: 'Run the same command again; it starts over.',
    });
  }
  await rename(partial, to);
  await unlink(etagFile).catch(() => {});
}

async function discard(partial: string, etagFile: string): Promise<void> {
  await Promise.all([unlink(partial).catch(() => {}), unlink(etagFile).catch(() => {})]);
}

async function sizeOf(file: string): Promise<number> {
  return stat(file).then(
    (info) => info.size,
    () => 0,
  );
}

/** The bytes of an earlier download of the same target, and the ETag they are of; null when none is there. */
async function resumePoint(partial: string, etagFile: string): Promise<{ bytes: number; etag: string } | null> {
  const [bytes, etag] = await Promise.all([sizeOf(partial), readFile(etagFile, 'utf8').catch(() => '')]);
  return bytes > 0 && etag.trim() !== '' ? { bytes, etag: etag.trim() } : null;
}

/** `Content-Range` read: `bytes <start>-<end>/<total>`, or a star and the total (a 416); null for anything else. */
function contentRange(response: IncomingMessage): { start: number | null; end: number | null; total: number } | null {
  const match = /^bytes (?:(\d+)-(\d+)|\*)\/(\d+)$/.exec(String(response.headers['content-range'] ?? ''));
  if (match === null) return null;
  return { start: match[1] ? Number(match[1]) : null, end: match[2] ? Number(match[2]) : null, total: Number(match[3]) };
}

/** A lock file still empty this long after it was made was left by a process stopped between making and writing it. */
const EMPTY_LOCK_MS = 10_000;

/**
 * Takes `<to>.svc-partial.lock` for this process: two downloads appending to one partial file would make one
 * file of both. Made whole at once (a file with the PID, linked to the lock's name, which fails where one
 * exists); a lock whose process is gone (a download stopped with Ctrl-C) is taken over, moved aside first so
 * that two takers cannot both win. `vol.get_file` in Python takes the same lock.
 */
async function lockDownload(to: string): Promise<() => Promise<void>> {
  const lock = `${to}.svc-partial.lock`;
  const mine = `${lock}.${process.pid}`;
  await writeFile(mine, String(process.pid));
  try {
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        await link(mine, lock);
        return () => unlink(lock).catch(() => {});
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = await lockHolder(lock);
      // This process's own PID there is a lock of a process gone that had it before (this one downloads one file once).
      if (holder === null || (holder !== process.pid && processRuns(holder))) {
        throw new SvcError('conflict', `another download (process ${holder ?? '?'}) is writing ${to}.`, {
          hint: `Wait for it to end, or stop it: run again, this one goes on from what it fetched (a lock left by a process that is gone: ${lock}).`,
        });
      }
      const aside = `${mine}.stale`;
      await rename(lock, aside).then(
        () => unlink(aside),
        () => {}, // another taker moved it first
      );
    }
    throw new SvcError('conflict', `cannot take ${lock}: another download keeps taking it.`);
  } finally {
    await unlink(mine).catch(() => {});
  }
}

/** The process a lock names; 0 for a lock gone or unreadable; null for one just made and not written yet. */
async function lockHolder(lock: string): Promise<number | null> {
  try {
    const text = (await readFile(lock, 'utf8')).trim();
    if (text === '') return Date.now() - (await stat(lock)).mtimeMs < EMPTY_LOCK_MS ? null : 0;
    const pid = Number(text);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : 0;
  } catch {
    return 0;
  }
}

function processRuns(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // it runs, as another user
  }
}
