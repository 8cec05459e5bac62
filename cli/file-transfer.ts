/**
 * Files to and from the API, streamed with Node's own HTTP client: fetch (undici) reads a request
 * body ahead of what the socket takes, so an upload of a large file ended up in memory whole (a
 * file of 256 MiB took 330 MiB of the CLI's); `pipeline` into a plain request writes each chunk once
 * the last has gone, so memory stays flat whatever the file's size. Downloads the same way, into a
 * file beside the target renamed onto it once complete.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { pipeline } from 'node:stream/promises';
import { SvcError } from '../core/model/errors.js';
import type { ApiClient } from './api-client.js';

/** An upload is read from its file in pieces of this size (64 KiB by default: four times the system calls). */
const READ_BYTES = 1024 * 1024;

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
  const size = (await stat(file)).size;
  const request = requestTo(client, 'PUT', path, {
    'Content-Type': 'application/octet-stream',
    'Content-Length': String(size),
    Accept: 'application/json',
  });
  const answered = new Promise<IncomingMessage>((resolve, reject) => {
    request.once('response', resolve);
    request.once('error', reject);
  });
  answered.catch(() => {});
  // The server may answer before the whole body went (volume_full, a refused path): its answer is what counts.
  const reader = createReadStream(file, { highWaterMark: READ_BYTES });
  reader.on('data', (chunk) => onBytes(chunk.length));
  const sent = await pipeline(reader, request).then(
    () => null,
    (error: unknown) => error,
  );
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
 * GETs `path` into `to`: into `<to>.svc-partial` first, renamed onto `to` once all of it came. A download
 * cut off keeps its partial file, with the file's ETag beside it (`<to>.svc-partial.etag`); the next
 * download into `to` asks only for the rest (`Range`, with `If-Range` naming that ETag) and appends it, or
 * starts over when the file changed meanwhile (the server then answers it whole).
 */
export async function downloadFile(
  client: ApiClient,
  path: string,
  to: string,
  onBytes: OnBytes = () => {},
  onResume: OnResume = () => {},
): Promise<void> {
  const partial = `${to}.svc-partial`;
  const etagFile = `${partial}.etag`;
  const resumable = await resumePoint(partial, etagFile);
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
  if (status === 416 && resumable !== null) {
    // The partial file is not a beginning of this one (a shorter file under the same ETag cannot be): start over.
    response.resume();
    await Promise.all([unlink(partial), unlink(etagFile)]).catch(() => {});
    return downloadFile(client, path, to, onBytes, onResume);
  }
  if (status !== 200 && status !== 206) throw client.errorFrom(status, await textOf(response), 'GET', path);
  const appending = status === 206 && resumable !== null && contentRangeStart(response) === resumable.bytes;
  if (status === 206 && !appending) {
    response.destroy();
    throw client.errorFrom(
      502,
      `the server answered bytes ${String(response.headers['content-range'])} to a request for bytes ${resumable?.bytes}-`,
      'GET',
      path,
    );
  }
  const etag = response.headers.etag;
  if (!appending) {
    if (typeof etag === 'string') await writeFile(etagFile, etag);
    else await unlink(etagFile).catch(() => {});
  } else onResume(resumable.bytes);
  response.on('data', (chunk: Buffer) => onBytes(chunk.length));
  try {
    // A buffer of 4 MiB: the socket's pieces are written together (writev) instead of pausing the download after 16 KiB.
    await pipeline(response, createWriteStream(partial, { highWaterMark: WRITE_BUFFER_BYTES, flags: appending ? 'a' : 'w' }));
  } catch (error) {
    // Kept to resume from where the file has an ETag to check it against; else nothing is left.
    if (typeof etag !== 'string') {
      await unlink(partial).catch(() => {});
      throw error;
    }
    const kept = await stat(partial).then(
      (info) => info.size,
      () => 0,
    );
    throw new SvcError(
      'server_unreachable',
      `the download from ${client.server} stopped after ${kept} bytes (${(error as Error).message}).`,
      {
        hint: `Run the same command again: it goes on from there (the bytes so far are in ${partial}).`,
        cause: error,
      },
    );
  }
  await rename(partial, to);
  await unlink(etagFile).catch(() => {});
}

/** The bytes of an earlier download of the same target, and the ETag they are of; null when none is there. */
async function resumePoint(partial: string, etagFile: string): Promise<{ bytes: number; etag: string } | null> {
  const [bytes, etag] = await Promise.all([
    stat(partial).then(
      (info) => info.size,
      () => 0,
    ),
    readFile(etagFile, 'utf8').catch(() => ''),
  ]);
  return bytes > 0 && etag !== '' ? { bytes, etag: etag.trim() } : null;
}

function contentRangeStart(response: IncomingMessage): number | null {
  const match = /^bytes (\d+)-\d+\/\d+$/.exec(String(response.headers['content-range'] ?? ''));
  return match ? Number(match[1]) : null;
}
