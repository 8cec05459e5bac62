/**
 * An upload of a file to the API: written a piece at a time, each once the socket took the last, through
 * a few buffers read into again and again (core/infra/files/file-range-stream.ts), so memory stays flat
 * whatever the file's size.
 */
import { open } from 'node:fs/promises';
import type http from 'node:http';
import type { IncomingMessage } from 'node:http';
import { FileRangeStream } from '../../core/infra/files/file-range-stream.js';
import type { ApiClient } from '../api-client.js';
import { type OnBytes, requestTo, textOf } from './request.js';

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
