import { lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SvcError } from '../../../model/errors.js';

/**
 * Unix socket paths are limited to ~107 bytes, so container sockets live
 * under a short folder in the system temp dir rather than in a data dir that
 * may be deeply nested: `$TMPDIR/svc-<uid>/<pid>-XXXXXX/`, one folder per
 * driver, so that two platforms never touch each other's sockets.
 */
export function socketBase(): string {
  return path.join(os.tmpdir(), `svc-${process.getuid?.() ?? 'user'}`);
}

/**
 * Makes this driver's own socket folder. The shared base must be ours and
 * private: another local user who created it first could otherwise swap
 * sockets and read the requests sent to them.
 */
export function makeSocketDir(): string {
  const base = socketBase();
  mkdirSync(base, { recursive: true, mode: 0o700 });
  const stat = lstatSync(base);
  const uid = process.getuid?.();
  if (!stat.isDirectory() || stat.isSymbolicLink() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o077) !== 0) {
    throw new SvcError('config_invalid', `the folder for container sockets, ${base}, is not a private folder of this user.`, {
      hint: `Remove ${base} (or make it yours with mode 0700), or point TMPDIR elsewhere.`,
    });
  }
  removeStaleSocketDirs(base);
  return mkdtempSync(path.join(base, `${process.pid}-`));
}

/**
 * Removes the folders that platforms which did not stop cleanly (killed, or a
 * machine that lost power) left behind: a folder is `<pid>-XXXXXX`, and one
 * whose process is gone is nobody's. A live process's folder is never
 * touched, whoever it is. Their containers have ended with their platform
 * (each watches its parent, runtime/_lifeline.py).
 */
export function removeStaleSocketDirs(base: string): void {
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^(\d+)-/.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid <= 0 || alive(pid)) continue;
    rmSync(path.join(base, name), { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, another user's (the folder is this user's, so not a platform of theirs; keep it anyway).
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
