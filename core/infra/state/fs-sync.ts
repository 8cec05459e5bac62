/**
 * The small file-system steps durability rests on: writing a whole buffer,
 * syncing a directory (so that a create or rename in it survives a power
 * cut), and creating directories whose entries are synced too.
 */
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/** Writes all of `bytes` at `position` (a write may be short; loop until done). */
export async function writeAll(handle: FileHandle, bytes: Buffer, position: number): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position + done);
    done += bytesWritten;
  }
}

/** fsync on a directory: makes the entries created, renamed or removed in it durable. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** `mkdir -p` (mode 0700) that also syncs each parent whose entries it changed. */
export async function makeDurableDirectory(dir: string): Promise<void> {
  const firstCreated = await mkdir(dir, { recursive: true, mode: 0o700 });
  if (firstCreated === undefined) return;
  for (let created = path.resolve(dir); ; created = path.dirname(created)) {
    await syncDirectory(path.dirname(created));
    if (created === path.resolve(firstCreated)) return;
  }
}
