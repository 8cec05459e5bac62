import { statfs } from 'node:fs/promises';
import path from 'node:path';
import { SvcError } from '../../model/errors.js';
import { formatBytes } from '../../model/format-bytes.js';

/** True for a write the file system refused for want of space (or past a quota). */
export function isOutOfSpace(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/**
 * `error` as svc says it: a write refused for want of space becomes `disk_full` (507) naming
 * `file` and the space left on its disk; anything else is returned as it is.
 */
export async function asDiskFull(error: unknown, file: string): Promise<unknown> {
  return isOutOfSpace(error) ? diskFull(file, await freeBytes(path.dirname(file))) : error;
}

/** `disk_full` for a write to `file`, with the space left where it is (null when unknown). */
export function diskFull(file: string, free: number | null): SvcError {
  const left = free === null ? 'no space left' : `${formatBytes(free)} free`;
  return new SvcError('disk_full', `the disk holding ${file} is full (${left}): the write was refused, nothing of it kept.`, {
    hint: 'Free space on that disk (old logs, images or bundles, or other files); writes work again at once, without a restart. Writes acknowledged before this one are safe.',
    details: { path: file, ...(free === null ? {} : { freeBytes: free }) },
  });
}

/** Bytes an unprivileged writer may still use on `dir`'s file system; null when it cannot be read. */
export async function freeBytes(dir: string): Promise<number | null> {
  try {
    const fs = await statfs(dir);
    return fs.bavail * fs.bsize;
  } catch {
    return null;
  }
}
