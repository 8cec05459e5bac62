import { lstatSync, mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SvcError } from '../../errors.js';

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
  return mkdtempSync(path.join(base, `${process.pid}-`));
}
