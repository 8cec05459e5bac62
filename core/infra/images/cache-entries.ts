/**
 * How environments enter the cache dir without ever being seen half-built:
 * each is built in a hidden temporary folder named after the building
 * process, then renamed into place in one step. Renaming is atomic, so two
 * svc processes building the same environment at once cannot corrupt it:
 * the first rename wins and the loser drops its copy and uses the winner's.
 */
import { randomBytes } from 'node:crypto';
import { lstat, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { removeAbandoned } from '../processes/abandoned.js';

/** `.<name>.<pid>.<random>`: hidden, and tells the sweeper which process built it. */
export function temporaryPath(root: string, name: string): string {
  return path.join(root, `.${name}.${process.pid}.${randomBytes(4).toString('hex')}`);
}

const TEMPORARY = /^\.[a-z][a-z-]*-[0-9a-f]+\.(\d+)\.[0-9a-f]+$/;

/**
 * Moves a finished build into place. When `dir` already exists: if it is
 * valid, another process finished the same build first and ours is dropped
 * ('theirs'); if not (an older layout, its interpreter gone), it is moved
 * aside and deleted, and ours takes its place.
 */
export async function moveIntoPlace(tmp: string, dir: string, isValid: (dir: string) => Promise<boolean>): Promise<'ours' | 'theirs'> {
  for (let attempt = 0; ; attempt++) {
    try {
      await rename(tmp, dir);
      return 'ours';
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || attempt >= 3) throw error;
    }
    if (await isValid(dir)) {
      await rm(tmp, { recursive: true, force: true });
      return 'theirs';
    }
    const trash = temporaryPath(path.dirname(dir), `trash-${path.basename(dir)}`);
    try {
      await rename(dir, trash);
    } catch (error) {
      // Someone else moved it first: try again.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    await rm(trash, { recursive: true, force: true });
  }
}

/** Half-built environments of svc processes that died mid-build (their pid is in the name). */
export function removeAbandonedBuilds(root: string): Promise<void> {
  return removeAbandoned(root, (entry) => Number(TEMPORARY.exec(entry)?.[1]) || null);
}

/**
 * A venv records its own path in a few text files: the `#!` line of every
 * script pip installs in `bin/`, the activate scripts and `pyvenv.cfg`.
 * Before the rename, point them at the final folder, or those scripts would
 * name an interpreter in a temporary folder that no longer exists.
 */
export async function relocateVenv(tmp: string, dir: string): Promise<void> {
  const bin = path.join(tmp, 'bin');
  const files = [path.join(tmp, 'pyvenv.cfg'), ...(await readdir(bin)).map((name) => path.join(bin, name))];
  for (const file of files) {
    const info = await lstat(file).catch(() => null);
    if (!info?.isFile() || info.size > 1024 * 1024) continue;
    const content = await readFile(file);
    // Binaries are left alone: replacing a path of another length would break them.
    if (content.includes(0) || !content.includes(tmp)) continue;
    await writeFile(file, content.toString('utf8').split(tmp).join(dir));
  }
}
