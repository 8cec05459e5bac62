/**
 * The files of one volume, in its folder on the server's disk. Every path is checked to stay in the
 * folder where it leads, not only as written: a symbolic link that a container made and that points
 * outside is refused like `..`. An upload is written to a temporary file beside its target and renamed
 * onto it once complete, so that a half-uploaded file never appears under its name.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, constants as fsConstants } from 'node:fs';
import { type FileHandle, link, lstat, mkdir, open, readdir, readlink, realpath, rename, rmdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { SvcError } from '../../model/errors.js';
import { UPLOAD_PREFIX } from '../../model/volume-paths.js';
import { asDiskFull } from '../files/disk-full.js';
import { FileRangeStream } from '../files/file-range-stream.js';
import { fileErrors } from './file-errors.js';
import type { EntriesListing, EntriesPage, OpenedFile, PickBytes, VolumeEntry } from './types.js';
/** An upload is written in pieces of about this size. */
const WRITE_BYTES = 1024 * 1024;

/** A file an upload replaced, until it is removed (just after the upload's answer): no longer the volume's. */
const REPLACED_SUFFIX = '-replaced';

async function exists(target: string): Promise<boolean> {
  return lstat(target).then(
    () => true,
    () => false,
  );
}

/**
 * The real path of `parts` under `root` (which exists), refusing one that leads outside; its deepest
 * existing ancestor when `parts` does not exist. A container may swap a folder of the path for a link
 * after this check: what is then opened is checked again where it is (`held`), and files are reached
 * from their opened folder (`under`), never through the path once more.
 */
async function inside(
  root: string,
  parts: readonly string[],
  shown = parts.join('/'),
): Promise<{ real: string; exists: boolean; rootReal: string }> {
  const rootReal = await realpath(root);
  let known = rootReal;
  for (let i = 0; i < parts.length; i += 1) {
    const next = path.join(known, parts[i]!);
    if (!(await exists(next))) return { real: path.join(known, ...parts.slice(i)), exists: false, rootReal };
    known = await realpath(next);
    if (!within(rootReal, known)) throw fileErrors.outside(shown);
  }
  return { real: known, exists: true, rootReal };
}

const within = (rootReal: string, real: string) => real === rootReal || real.startsWith(`${rootReal}${path.sep}`);

/** Where the kernel says an open file or folder is (`/proc/self/fd`); null without /proc. */
async function whereIs(handle: FileHandle): Promise<string | null> {
  return readlink(`/proc/self/fd/${handle.fd}`).catch(() => null);
}

/** `handle`, once what it opened is known to be inside the volume; closed and refused (`outside`) when not. */
async function held(handle: FileHandle, rootReal: string, shown: string): Promise<FileHandle> {
  const where = await whereIs(handle);
  if (where === null || within(rootReal, where)) return handle;
  await handle.close();
  throw fileErrors.outside(shown);
}

/** An opened folder, checked inside the volume. */
async function openFolder(real: string, rootReal: string, shown: string): Promise<FileHandle> {
  return held(await open(real, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY), rootReal, shown);
}

/** `name` in the opened `folder`: reached through the folder itself (its /proc/self/fd link), so a link swapped in above it leads nowhere else. */
function under(folder: FileHandle, real: string, name: string): string {
  return hasProc ? `/proc/self/fd/${folder.fd}/${name}` : path.join(real, name);
}

const hasProc = existsSync('/proc/self/fd');

/**
 * A page of what `parts` names: a file's entry, or a folder's entries (all below it when `recursive`),
 * depth first, each folder's names sorted (so by path); `page.after` must lie below `parts`.
 */
export async function listEntries(
  root: string,
  volume: string,
  parts: readonly string[],
  recursive: boolean,
  page: EntriesPage,
): Promise<EntriesListing> {
  const shown = parts.join('/');
  const { real, exists: found, rootReal } = await inside(root, parts);
  if (!found) throw fileErrors.notFound(volume, shown);
  const info = await stat(real);
  if (!info.isDirectory()) return { entries: page.after === null ? [entryOf(shown, info)] : [], next: null };
  const entries: VolumeEntry[] = [];
  let more = false;
  // Each folder is listed from its opened handle, and entered without following a link: what is listed
  // stays inside the volume however its folders are swapped meanwhile. `after` holds the names of the
  // cursor still ahead at this depth: names before its first come on earlier pages, and so does that
  // entry itself (not what is below it).
  const walk = async (folder: FileHandle, folderReal: string, prefix: string, after: readonly string[]): Promise<void> => {
    const names = (await readdir(under(folder, folderReal, ''))).filter((name) => !name.startsWith(UPLOAD_PREFIX)).sort();
    for (const name of names) {
      if (more) return;
      const cursor = after[0];
      if (cursor !== undefined && name < cursor) continue;
      const seen = name === cursor;
      const at = prefix === '' ? name : `${prefix}/${name}`;
      const details = await lstat(under(folder, folderReal, name));
      if (!seen) {
        if (entries.length === page.limit) {
          more = true;
          return;
        }
        entries.push(entryOf(at, details));
      }
      if (!recursive || !details.isDirectory()) continue;
      const child = await open(under(folder, folderReal, name), fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | fsConstants.O_NOFOLLOW);
      try {
        await walk(child, path.join(folderReal, name), at, seen ? after.slice(1) : []);
      } finally {
        await child.close();
      }
    }
  };
  const top = await openFolder(real, rootReal, shown);
  try {
    await walk(top, real, shown, page.after?.slice(parts.length) ?? []);
  } finally {
    await top.close();
  }
  return { entries, next: more ? entries.at(-1)!.path : null };
}

function entryOf(at: string, info: { isDirectory(): boolean; isSymbolicLink(): boolean; size: number; mtime: Date }): VolumeEntry {
  const type = info.isDirectory() ? 'dir' : info.isSymbolicLink() ? 'link' : 'file';
  return { path: at, type, size: type === 'file' ? info.size : 0, modifiedAt: info.mtime.toISOString() };
}

/**
 * Writes `body` to `parts` (folders made as needed): to a temporary file first, renamed onto the
 * target once all of it arrived. `room` is how many bytes may still be written; past it the upload
 * fails with `volume_full` (from `full()`) and nothing is left behind. With the new file's entry: the
 * bytes of the file it replaced (0 for none).
 */
export async function writeFile(
  root: string,
  volume: string,
  parts: readonly string[],
  body: Readable,
  room: number,
  full: (written: number) => SvcError,
): Promise<{ entry: VolumeEntry; replacedBytes: number }> {
  const shown = parts.join('/');
  if (parts.length === 0) throw fileErrors.rootNotAFile();
  const parent = await inside(root, parts.slice(0, -1), shown);
  if (parent.exists && !(await stat(parent.real)).isDirectory()) {
    throw fileErrors.parentIsAFile(volume, parts.slice(0, -1).join('/'));
  }
  await mkdir(parent.real, { recursive: true });
  const folder = await openFolder(parent.real, parent.rootReal, shown);
  let released: Promise<void> = Promise.resolve();
  try {
    const {
      entry,
      replacedBytes,
      released: replaced,
    } = await writeInto(folder, parent.real, parts.at(-1)!, volume, shown, body, room, full);
    released = replaced;
    return { entry, replacedBytes };
  } finally {
    // The folder stays open until the replaced file is gone: it is reached through the folder.
    void released.finally(() => folder.close().catch(() => {}));
  }
}

/** The upload, written into the opened `folder` (the temporary file and the rename both reached through it). */
async function writeInto(
  folder: FileHandle,
  folderReal: string,
  name: string,
  volume: string,
  shown: string,
  body: Readable,
  room: number,
  full: (written: number) => SvcError,
): Promise<{ entry: VolumeEntry; replacedBytes: number; released: Promise<void> }> {
  const target = under(folder, folderReal, name);
  const before = await lstat(target).catch(() => null);
  if (before?.isDirectory()) throw fileErrors.folderInTheWay(volume, shown);
  const temporary = under(folder, folderReal, `${UPLOAD_PREFIX}${randomBytes(8).toString('hex')}`);
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
    // A file replaced is kept under another name until the new one has taken its own: freeing a large
    // file's blocks and cached pages takes the rename 0.3 s per 2 GiB here, which is not the upload's to wait for.
    const replaced = under(folder, folderReal, `${UPLOAD_PREFIX}${randomBytes(8).toString('hex')}${REPLACED_SUFFIX}`);
    // Only a file: where link(2) follows a symbolic link (BSD, macOS), one a container made would be linked from outside.
    const kept =
      before?.isFile() === true &&
      (await link(target, replaced).then(
        () => true,
        () => false, // gone meanwhile, or no hard links here: the rename frees it
      ));
    const release = () => (kept ? unlink(replaced).catch(() => {}) : Promise.resolve());
    let entry: VolumeEntry;
    try {
      await rename(temporary, target);
      entry = entryOf(shown, await stat(target));
    } catch (error) {
      await release();
      throw error;
    }
    return { entry, replacedBytes: before?.isFile() ? before.size : 0, released: release() };
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
    throw await asDiskFull(error, path.join(folderReal, name));
  }
}

/**
 * The file at `parts`, to stream: the bytes `pick` chooses (all by default); `not_found`, or `bad_request`
 * for a folder. `pick` may throw (a range past the end): the file is closed first.
 */
export async function openFile(root: string, volume: string, parts: readonly string[], pick: PickBytes = () => null): Promise<OpenedFile> {
  const shown = parts.join('/');
  const { real, exists: found, rootReal } = await inside(root, parts);
  if (!found) throw fileErrors.notFound(volume, shown);
  const handle = await held(await open(real, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW), rootReal, shown);
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
  if (!parent.exists) throw fileErrors.notFound(volume, shown);
  const folder = await openFolder(parent.real, parent.rootReal, shown);
  try {
    const target = under(folder, parent.real, parts.at(-1)!);
    if (!(await exists(target))) throw fileErrors.notFound(volume, shown);
    const info = await lstat(target);
    if (info.isDirectory() && !recursive) {
      throw fileErrors.needsRecursive(volume, shown);
    }
    // A link is removed itself, never what it points to.
    if (info.isDirectory()) await removeTree(folder, parent.real, parts.at(-1)!);
    else await unlink(target);
  } finally {
    await folder.close();
  }
}

/**
 * Removes the folder `name` of the opened `folder` and all it holds, each folder entered from its
 * parent's descriptor without following a link (a plain `rm -r` by path follows a subfolder a container
 * swaps for a link while it works, and removes what the link leads to).
 */
async function removeTree(folder: FileHandle, folderReal: string, name: string): Promise<void> {
  const at = under(folder, folderReal, name);
  const opened = await open(at, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | fsConstants.O_NOFOLLOW);
  try {
    const childReal = path.join(folderReal, name);
    for (const entry of await readdir(under(opened, childReal, ''), { withFileTypes: true })) {
      if (entry.isDirectory()) await removeTree(opened, childReal, entry.name);
      else await unlink(under(opened, childReal, entry.name));
    }
  } finally {
    await opened.close();
  }
  await rmdir(at);
}

/** Bytes held by the files under `folder` (0 when it does not exist). */
export async function usedBytes(folder: string): Promise<number> {
  let total = 0;
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile() && !(entry.name.startsWith(UPLOAD_PREFIX) && entry.name.endsWith(REPLACED_SUFFIX))) {
        total += (await lstat(full).catch(() => ({ size: 0 }))).size;
      }
    }
  };
  await walk(folder);
  return total;
}
