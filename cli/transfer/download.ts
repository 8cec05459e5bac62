/**
 * A file from the API into `to`: written into `<to>.svc-partial` first and renamed onto `to` once it has
 * all of the file, going on from what an earlier download left (partial-download.ts). The first request
 * asks for the first part; a file of one part comes whole (200), a larger one in parts over several
 * connections at once (download-parts.ts). One download into `to` at a time (download-lock.ts).
 */
import { unlink, writeFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import type { ApiClient } from '../api-client.js';
import { lockDownload } from './download-lock.js';
import { fetchParts } from './download-parts.js';
import {
  bytesIn,
  discard,
  finish,
  missingSpans,
  type PartialFiles,
  partialFilesOf,
  resumableOf,
  sizeOf,
  stoppedAfter,
} from './partial-download.js';
import { answerTo, contentRange, type OnBytes, textOf } from './request.js';
import { writeBody } from './write-body.js';

/** Told once where a download resumed (bytes already on disk), before any more bytes move. */
export type OnResume = (bytes: number) => void;

export interface DownloadOptions {
  /** Told each piece's bytes as they come (a progress bar). */
  readonly onBytes?: OnBytes;
  readonly onResume?: OnResume;
  /** Bytes of one part: a file larger than one part comes in parts. */
  readonly partBytes?: number;
  /** Parts fetched at once, each over a connection of its own. */
  readonly connections?: number;
}

/**
 * 64 MiB parts, two at once: over one connection the CLI's one thread takes each piece off the socket,
 * parses it and hands it to be written, and the server waits meanwhile. Two fetched a 2 GiB file in 0.75x
 * the time of one here (the median of five paired runs, one machine of two cores) and with steadier
 * times; three were no faster, four slower and 30 MiB larger. A connection cut off keeps what it wrote of
 * its part; a download stopped with Ctrl-C fetches the parts it had in flight again.
 */
const DEFAULTS = { partBytes: 64 * 1024 * 1024, connections: 2 };

/** The headers of a request for the whole file. */
const WHOLE = { Accept: 'application/octet-stream' };

/** GETs `path` (a volume's file) into `to`; see the module's comment and docs/volumes.md. */
export async function downloadFile(client: ApiClient, path: string, to: string, options: DownloadOptions = {}): Promise<void> {
  const release = await lockDownload(to);
  try {
    await fetchInto(client, path, to, { onBytes: () => {}, onResume: () => {}, ...DEFAULTS, ...options }, true);
  } finally {
    await release();
  }
}

async function fetchInto(
  client: ApiClient,
  path: string,
  to: string,
  options: Required<DownloadOptions>,
  mayResume: boolean,
): Promise<void> {
  const files = partialFilesOf(to);
  const earlier = mayResume ? await resumableOf(files) : null;
  // The first span not yet here, from what an earlier download left (the whole file when nothing was).
  const gap = missingSpans(earlier?.done ?? [], earlier?.size ?? Number.POSITIVE_INFINITY)[0];
  // All of it came before; only the rename did not.
  if (earlier !== null && gap === undefined) return finish(files, to, earlier.size);
  const [start, gapEnd] = gap ?? [0, Number.POSITIVE_INFINITY];
  const headers: Record<string, string> = {
    Accept: 'application/octet-stream',
    Range: `bytes=${start}-${Math.min(gapEnd, start + options.partBytes) - 1}`,
  };
  if (earlier !== null) headers['If-Range'] = earlier.etag;
  const response = await answerTo(client, path, headers);
  const status = response.statusCode ?? 0;
  const range = contentRange(response);
  const startOver = async () => {
    response.destroy();
    await discard(files);
    // In parts once more; a file that changes again meanwhile (still being written) comes whole, in one answer.
    if (!mayResume) return fetchWhole(client, path, await answerTo(client, path, WHOLE), files, to, options.onBytes);
    return fetchInto(client, path, to, options, false);
  };
  if (status === 416) {
    // A beginning as long as the file under the same ETag: all of it came, only the rename did not.
    if (earlier !== null && earlier.size === null && range?.total === start) {
      response.resume();
      return finish(files, to, start);
    }
    if (earlier !== null) return startOver(); // longer than the file: not of this file
    if (range?.total === 0) {
      response.resume();
      await writeFile(files.partial, '');
      return finish(files, to, 0);
    }
  }
  // Refused (not found, signed out, the server failing): what an earlier download left stays for the next.
  if (status !== 200 && status !== 206) throw client.errorFrom(status, await textOf(response).catch(() => ''), 'GET', path);
  if (status === 200) return fetchWhole(client, path, response, files, to, options.onBytes);
  const etag = strongEtag(response);
  // The part asked for, from `start`: the whole of it, or up to the file's end.
  const part =
    range?.start === start && range.end !== null && range.end < start + options.partBytes ? { end: range.end, size: range.total } : null;
  if (part === null || (earlier?.size != null && earlier.size !== part.size)) return startOver();
  if (etag === null) {
    // Parts with nothing to check them against (no ETag: a proxy's answer): the file whole instead.
    response.destroy();
    return fetchWhole(client, path, await answerTo(client, path, WHOLE), files, to, options.onBytes);
  }
  const done = earlier?.done ?? [];
  if (bytesIn(done) > 0) options.onResume(bytesIn(done));
  const fetched = await fetchParts({
    client,
    path,
    files,
    etag,
    size: part.size,
    done,
    first: { response, start, end: part.end },
    ...options,
  });
  if (fetched === 'changed') return startOver();
  await finish(files, to, part.size);
}

/** The whole file, from its first byte (a 200): its ETag kept beside it, so that a cut-off download goes on from the bytes that came. */
async function fetchWhole(
  client: ApiClient,
  path: string,
  response: IncomingMessage,
  files: PartialFiles,
  to: string,
  onBytes: OnBytes,
): Promise<void> {
  if (response.statusCode !== 200) throw client.errorFrom(response.statusCode ?? 0, await textOf(response).catch(() => ''), 'GET', path);
  const total = Number(response.headers['content-length'] ?? Number.NaN);
  const etag = strongEtag(response);
  // No bytes of another version may stand beside the new ETag, even for a moment (a stop there would make them its beginning).
  await Promise.all([unlink(files.parts).catch(() => {}), unlink(files.partial).catch(() => {})]);
  if (etag !== null) await writeFile(files.etag, etag);
  else await unlink(files.etag).catch(() => {});
  let cut: Error | null;
  try {
    ({ cut } = await writeBody(response, files.partial, { flags: 'w' }, onBytes));
  } catch (error) {
    await discard(files); // a local failure (a full disk, no permission): nothing is left
    throw error;
  }
  const kept = await sizeOf(files.partial);
  if (cut !== null || (Number.isFinite(total) && kept < total)) {
    if (etag === null) await discard(files); // nothing to check the rest against
    throw stoppedAfter(client, kept, cut, etag === null ? null : files.partial);
  }
  await finish(files, to, Number.isFinite(total) ? total : null);
}

/** The answer's ETag; null for none or a weak one (a proxy's), which never matches If-Range. */
function strongEtag(response: IncomingMessage): string | null {
  const etag = response.headers.etag;
  return typeof etag === 'string' && !etag.startsWith('W/') ? etag : null;
}
