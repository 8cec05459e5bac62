/**
 * Requests of files to and from the API, made with Node's own HTTP client: fetch (undici) reads a
 * request body ahead of what the socket takes, so an upload of a large file ended up in memory whole (a
 * file of 256 MiB took 330 MiB of the CLI's); a plain request is written a piece at a time, each once
 * the socket took the last.
 */
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { ApiClient } from '../api-client.js';

export function requestTo(client: ApiClient, method: string, path: string, headers: Record<string, string>): http.ClientRequest {
  const url = new URL(`${client.server}${path}`);
  return (url.protocol === 'https:' ? https : http).request(url, { method, headers: { ...client.authorization(), ...headers } });
}

/** A GET's answer, or the connection's failure as `server_unreachable`. */
export async function answerTo(client: ApiClient, path: string, headers: Record<string, string>): Promise<IncomingMessage> {
  const request = requestTo(client, 'GET', path, headers);
  return new Promise<IncomingMessage>((resolve, reject) => {
    request.once('response', (response) => {
      // A connection cut before the body is read (the partial file still being set up) must not throw as an
      // 'error' nobody listens to: the answer keeps it (errored), and its reader sees it (write-body.ts).
      response.on('error', () => {});
      resolve(response);
    });
    request.once('error', reject);
    request.end();
  }).catch((error: unknown) => {
    throw client.unreachable({ message: (error as Error).message, cause: error });
  });
}

export async function textOf(response: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of response) text += (chunk as Buffer).toString();
  return text;
}

/** Told how many more bytes moved, as they move (a progress bar). */
export type OnBytes = (bytes: number) => void;

/** `Content-Range` read: `bytes <start>-<end>/<total>`, or a star and the total (a 416); null for anything else. */
export function contentRange(response: IncomingMessage): { start: number | null; end: number | null; total: number } | null {
  const match = /^bytes (?:(\d+)-(\d+)|\*)\/(\d+)$/.exec(String(response.headers['content-range'] ?? ''));
  if (match === null) return null;
  return { start: match[1] ? Number(match[1]) : null, end: match[2] ? Number(match[2]) : null, total: Number(match[3]) };
}
