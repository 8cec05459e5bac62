/**
 * Files to and from the API, streamed with Node's own HTTP client: fetch (undici) reads a request
 * body ahead of what the socket takes, so an upload of a large file ended up in memory whole (a
 * file of 256 MiB took 330 MiB of the CLI's); `pipeline` into a plain request writes each chunk once
 * the last has gone, so memory stays flat whatever the file's size. Downloads the same way, into a
 * file beside the target renamed onto it once complete.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, stat, unlink } from 'node:fs/promises';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { pipeline } from 'node:stream/promises';
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

/** GETs `path` into `to`: into `<to>.svc-partial` first, renamed onto `to` once all of it came. */
export async function downloadFile(client: ApiClient, path: string, to: string, onBytes: OnBytes = () => {}): Promise<void> {
  const request = requestTo(client, 'GET', path, { Accept: 'application/octet-stream' });
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    request.once('response', resolve);
    request.once('error', reject);
    request.end();
  }).catch((error: unknown) => {
    throw client.unreachable({ message: (error as Error).message, cause: error });
  });
  const status = response.statusCode ?? 0;
  if (status !== 200) throw client.errorFrom(status, await textOf(response), 'GET', path);
  const partial = `${to}.svc-partial`;
  response.on('data', (chunk: Buffer) => onBytes(chunk.length));
  try {
    // A buffer of 4 MiB: the socket's pieces are written together (writev) instead of pausing the download after 16 KiB.
    await pipeline(response, createWriteStream(partial, { highWaterMark: WRITE_BUFFER_BYTES }));
    await rename(partial, to);
  } catch (error) {
    await unlink(partial).catch(() => {});
    throw error;
  }
}
