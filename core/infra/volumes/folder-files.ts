/**
 * The files of one volume, in its folder on the server's disk. Every path is checked to stay in the
 * folder where it leads, not only as written: a symbolic link that a container made and that points
 * outside is refused like `..`. An upload is written to a temporary file beside its target and renamed
 * onto it once complete, so that a half-uploaded file never appears under its name.
 */
import { randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { lstat, mkdir, open, readdir, realpath, rename, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { SvcError } from '../../model/errors.js';
import { asDiskFull } from '../files/disk-full.js';
import { FileRangeStream } from '../files/file-range-stream.js';
import { fileErrors, MAX_LIST_ENTRIES } from './file-errors.js';
import type { OpenedFile, PickBytes, VolumeEntry } from './types.js';
/** An upload is written in pieces of about this size. */
const WRITE_BYTES = 1024 * 1024;
/** Uploads in progress are `.svc-upload-*` files beside their target; listings leave them out. */
const UPLOAD_PREFIX = '.svc-upload-';

async function exists(target: string): Promise<boolean> {
  return lstat(target).then(
    () => true,
    () => false,
  );
}

/** The real path of `parts` under `root` (which exists), refusing one that leads outside; its deepest existing ancestor when `parts` does not exist. */
async function inside(root: string, parts: readonly string[], shown = parts.join('/')): Promise<{ real: string; exists: boolean }> {
  const rootReal = await realpath(root);
  let known = rootReal;
  for (let i = 0; i < parts.length; i += 1) {
    const next = path.join(known, parts[i]!);
    if (!(await exists(next))) return { real: path.join(known, ...parts.slice(i)), exists: false };
    known = await realpath(next);
    if (known !== rootReal && !known.startsWith(`${rootReal}${path.sep}`)) throw fileErrors.outside(shown);
  }
  return { real: known, exists: true };
}

/** What `parts` names: a file's entry, or a folder's entries (all below it when `recursive`), sorted by path. */
export async function listEntries(root: string, volume: string, parts: readonly string[], recursive: boolean): Promise<VolumeEntry[]> {
  const shown = parts.join('/');
  const { real, exists: found } = await inside(root, parts);
  if (!found) throw fileErrors.notFound(volume, shown);
  const info = await stat(real);
  if (!info.isDirectory()) return [entryOf(shown, info)];
  const entries: VolumeEntry[] = [];
  const walk = async (folder: string, prefix: string): Promise<void> => {
    const names = (await readdir(folder)).filter((name) => !name.startsWith(UPLOAD_PREFIX)).sort();
    for (const name of names) {
      if (entries.length >= MAX_LIST_ENTRIES) {
        throw fileErrors.tooMany(shown);
      }
      const full = path.join(folder, name);
      const at = prefix === '' ? name : `${prefix}/${name}`;
      const details = await lstat(full);
      entries.push(entryOf(at, details));
      if (recursive && details.isDirectory()) await walk(full, at);
    }
  };
  await walk(real, shown);
  return entries;
}

function entryOf(at: string, info: { isDirectory(): boolean; isSymbolicLink(): boolean; size: number; mtime: Date }): VolumeEntry {
  const type = info.isDirectory() ? 'dir' : info.isSymbolicLink() ? 'link' : 'file';
  return { path: at, type, size: type === 'file' ? info.size : 0, modifiedAt: info.mtime.toISOString() };
}

/**
 * Writes `body` to `parts` (folders made as needed): to a temporary file first, renamed onto the
 * target once all of it arrived. `room` is how many bytes may still be written; past it the upload
 * fails with `volume_full` (from `full()`) and nothing is left behind.
 */
export async function writeFile(
  root: string,
  volume: string,
  parts: readonly string[],
  body: Readable,
  room: number,
  full: (written: number) => SvcError,
): Promise<VolumeEntry> {
  const shown = parts.join('/');
  if (parts.length === 0) throw fileErrors.rootNotAFile();
  const parent = await inside(root, parts.slice(0, -1), shown);
  if (parent.exists && !(await stat(parent.real)).isDirectory()) {
    throw fileErrors.parentIsAFile(volume, parts.slice(0, -1).join('/'));
  }
  await mkdir(parent.real, { recursive: true });
  const target = path.join(parent.real, parts.at(-1)!);
  if ((await exists(target)) && (await lstat(target)).isDirectory()) {
    throw fileErrors.folderInTheWay(volume, shown);
  }
  const temporary = path.join(parent.real, `${UPLOAD_PREFIX}${randomBytes(8).toString('hex')}`);
  let written = 0;
  try {
    const handle = await open(temporary, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW, 0o644);
    try {
      // Chunks gathered up to WRITE_BYTES and written in one call, which the thread pool does while the
      // socket fills the next batch (one write in flight at a time, so they land in order): memory stays
      // flat, at two batches, whatever the file's size, and a socket's 64 KiB reads do not each cost a trip
      // to the thread pool.
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      let writing: Promise<unknown> = Promise.resolve();
      // Not destroyed when the loop stops early (volume_full): the client still gets its answer (below).
      for await (const chunk of body.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
        written += chunk.length;
        if (written > room) throw full(written);
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (pendingBytes >= WRITE_BYTES) {
          await writing;
          writing = handle.writev(pending);
          writing.catch(() => {}); // awaited before the next write or at the end
          pending = [];
          pendingBytes = 0;
        }
      }
      await writing;
      if (pending.length > 0) await handle.writev(pending);
      await handle.sync(); // durable before it takes the name: a crash never leaves a short file there
    } finally {
      await handle.close();
    }
    await rename(temporary, target);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    // The client went away mid-upload: nothing to report, and nothing was kept.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE') {
      body.destroy();
      throw fileErrors.cutOff(shown, error);
    }
    // The rest of a refused upload is left unread, not destroyed: the client, still sending, gets the
    // answer on a connection still whole (the API reads and drops the rest for a few seconds).

    throw await asDiskFull(error, target);
  }
  return entryOf(shown, await stat(target));
}

/**
 * The file at `parts`, to stream: the bytes `pick` chooses (all by default); `not_found`, or `bad_request`
 * for a folder. `pick` may throw (a range past the end): the file is closed first.
 */
export async function openFile(root: string, volume: string, parts: readonly string[], pick: PickBytes = () => null): Promise<OpenedFile> {
  const shown = parts.join('/');
  const { real, exists: found } = await inside(root, parts);
  if (!found) throw fileErrors.notFound(volume, shown);
  const handle = await open(real, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  let picked: { start: number; end: number } | null;
  let info: Awaited<ReturnType<typeof handle.stat>>;
  try {
    info = await handle.stat();
    if (!info.isFile()) {
      throw fileErrors.folderNotFile(volume, shown);
    }
    picked = pick({ size: info.size, etag: etagOf(info) });
  } catch (error) {
    await handle.close();
    throw error;
  }
  const { start, end } = picked ?? { start: 0, end: info.size - 1 };
  if (end < start) {
    await handle.close(); // an empty file: nothing to read
    return { size: info.size, etag: etagOf(info), start, end, stream: Readable.from([]) };
  }
  // The stream owns the handle from here: it closes it at the end, or when the client goes. It stops at
  // the size it had when opened, which Content-Length said, even while a container appends to the file.
  // Read in pieces of 1 MiB, not the default 64 KiB: a multi-GiB get costs a sixteenth of the reads and socket
  // writes; the API answers it through buffers it reuses (file-range-stream.ts).
  const stream = new FileRangeStream(handle, start, end);
  return { size: info.size, etag: etagOf(info), start, end, stream };
}

/**
 * The file's inode, size, and last change of its content and of its inode (ctime, which no one can set back):
 * a file replaced or rewritten gets another tag; two writes of the same size within one tick of the file
 * system's clock can keep it (docs/volumes.md says so).
 */
function etagOf(info: { size: number; mtimeMs: number; ctimeMs: number; ino: number }): string {
  const micros = (ms: number) => Math.round(ms * 1000).toString(36);
  return `"${info.ino.toString(36)}-${info.size.toString(36)}-${micros(info.mtimeMs)}-${micros(info.ctimeMs)}"`;
}

/** Removes the file or folder at `parts` (a folder with what it holds only when `recursive`); never the root. */
export async function removePath(root: string, volume: string, parts: readonly string[], recursive: boolean): Promise<void> {
  const shown = parts.join('/');
  if (parts.length === 0) {
    throw fileErrors.rootNotRemovable(volume);
  }
  const parent = await inside(root, parts.slice(0, -1), shown);
  const target = path.join(parent.real, parts.at(-1)!);
  if (!parent.exists || !(await exists(target))) throw fileErrors.notFound(volume, shown);
  const info = await lstat(target);
  if (info.isDirectory() && !recursive) {
    throw fileErrors.needsRecursive(volume, shown);
  }
  // A link is removed itself, never what it points to.
  await rm(target, { recursive: info.isDirectory(), force: false });
}

/** Bytes held by the files under `folder` (0 when it does not exist). */
export async function usedBytes(folder: string): Promise<number> {
  let total = 0;
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) total += (await lstat(full).catch(() => ({ size: 0 }))).size;
    }
  };
  await walk(folder);
  return total;
}
