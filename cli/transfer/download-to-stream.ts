/**
 * A file from the API written to a stream as it comes (`svc volume get <volume> <file> -`, to standard
 * output): nothing is kept on disk, so a download cut off starts over when run again.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { ApiClient } from '../api-client.js';
import { stoppedAfter } from './partial-download.js';
import { answerTo, textOf } from './request.js';

/**
 * GETs `path` (a volume's file) into `out`, waiting for it whenever it is full (a slow pipe); resolves with
 * the bytes written. A reader that went away (`EPIPE`: `| head`) ends it quietly, as other tools do.
 */
export async function downloadToStream(client: ApiClient, path: string, out: Writable): Promise<number> {
  const response = await answerTo(client, path, { Accept: 'application/octet-stream' });
  const status = response.statusCode ?? 0;
  if (status !== 200) throw client.errorFrom(status, await textOf(response).catch(() => ''), 'GET', path);
  const total = Number(response.headers['content-length'] ?? Number.NaN);
  // The stream's failure, once it has one: written asynchronously, it comes as an event, not from write().
  let failed: NodeJS.ErrnoException | null = null;
  let fail: (error: NodeJS.ErrnoException) => void = () => {};
  const failure = new Promise<void>((resolve) => {
    fail = (error) => {
      failed ??= error;
      resolve(); // a wait for room ends: there will be none
    };
  });
  out.on('error', fail);
  let sent = 0;
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      if (failed === null && !out.write(chunk)) await Promise.race([once(out, 'drain'), failure]);
      if (failed !== null) break;
      sent += chunk.length;
    }
  } catch (error) {
    throw stoppedAfter(client, sent, error as Error, null);
  } finally {
    out.removeListener('error', fail);
    response.destroy();
  }
  if (failed !== null) {
    if ((failed as NodeJS.ErrnoException).code === 'EPIPE') return sent;
    throw failed;
  }
  if (Number.isFinite(total) && sent < total) throw stoppedAfter(client, sent, null, null);
  return sent;
}
