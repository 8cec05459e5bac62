/**
 * One download into a file at a time: `svc volume get` and `vol.get_file` in Python take the same lock
 * beside the target (`<to>.svc-partial.lock`).
 */
import { randomBytes } from 'node:crypto';
import { link, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SvcError } from '../../core/model/errors.js';
import { lockFileOf } from './partial-download.js';

/** The locks this process holds, by absolute path. */
const heldHere = new Set<string>();

/** A lock file still empty this long after it was made was left by a process stopped between making and writing it. */
const EMPTY_LOCK_MS = 10_000;

/**
 * Takes `<to>.svc-partial.lock` for this process: two downloads appending to one partial file would make one
 * file of both. Made whole at once (a file with the PID, linked to the lock's name, which fails where one
 * exists); a lock whose process is gone (a download stopped with Ctrl-C) is taken over, moved aside first so
 * that two takers cannot both win. `vol.get_file` in Python takes the same lock.
 */
export async function lockDownload(to: string): Promise<() => Promise<void>> {
  const lock = lockFileOf(to);
  // A folder's files are fetched a few at once: two of them may be one file here (names that differ only
  // in case, on a disk that does not tell them apart).
  if (heldHere.has(path.resolve(lock))) {
    throw new SvcError('conflict', `another download of this command is writing ${to}.`, {
      hint: 'Two files of the folder land on one file here (names that differ only in case?): fetch them one by one.',
    });
  }
  const mine = `${lock}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(mine, String(process.pid));
  try {
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        await link(mine, lock);
        heldHere.add(path.resolve(lock));
        return async () => {
          heldHere.delete(path.resolve(lock));
          await unlink(lock).catch(() => {});
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = await lockHolder(lock);
      // This process's own PID on a lock it does not hold is one a process gone left (the PID used again).
      if (holder === null || (holder !== process.pid && processRuns(holder)) || heldHere.has(path.resolve(lock))) {
        throw new SvcError('conflict', `another download (process ${holder ?? '?'}) is writing ${to}.`, {
          hint: `Wait for it to end, or stop it: run again, this one goes on from what it fetched (a lock left by a process that is gone: ${lock}).`,
        });
      }
      const aside = `${mine}.stale`;
      await rename(lock, aside).then(
        () => unlink(aside),
        () => {}, // another taker moved it first
      );
    }
    throw new SvcError('conflict', `cannot take ${lock}: another download keeps taking it.`);
  } finally {
    await unlink(mine).catch(() => {});
  }
}

/** The process a lock names; 0 for a lock gone or unreadable; null for one just made and not written yet. */
async function lockHolder(lock: string): Promise<number | null> {
  try {
    const text = (await readFile(lock, 'utf8')).trim();
    if (text === '') return Date.now() - (await stat(lock)).mtimeMs < EMPTY_LOCK_MS ? null : 0;
    const pid = Number(text);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : 0;
  } catch {
    return 0;
  }
}

function processRuns(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // it runs, as another user
  }
}
