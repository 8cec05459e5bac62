import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SvcError } from '../../model/errors.js';
import { asDiskFull, isOutOfSpace } from './disk-full.js';

/**
 * Makes `dir` (0700 where it is new) and proves svc can write there, with a file written and
 * removed, before svc keeps anything in it: a data dir on a read-only or full file system, or one
 * svc may not write, is refused at once saying which (`config_invalid`, or `disk_full`), instead of
 * failing halfway through a start.
 */
export async function ensureWritableDir(dir: string, what: string): Promise<void> {
  const probe = path.join(dir, `.svc-write-check-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(probe, 'svc\n', { flag: 'wx' });
    await rm(probe, { force: true });
  } catch (error) {
    await rm(probe, { force: true }).catch(() => {});
    throw isOutOfSpace(error) ? await asDiskFull(error, probe) : unwritable(dir, what, error as NodeJS.ErrnoException);
  }
}

function unwritable(dir: string, what: string, error: NodeJS.ErrnoException): SvcError {
  const change = `or give svc another (--data-dir or SVC_DATA_DIR).`;
  switch (error.code) {
    case 'EROFS':
      return new SvcError('config_invalid', `svc cannot write its ${what} ${dir}: it is on a read-only file system.`, {
        hint: `Mount it read-write, ${change}`,
        details: { path: dir, errno: error.code },
      });
    case 'EACCES':
    case 'EPERM':
      return new SvcError('config_invalid', `svc (user ${process.getuid?.() ?? '?'}) may not write its ${what} ${dir}.`, {
        hint: `Give that user the folder (chown, chmod u+rwx), ${change}`,
        details: { path: dir, errno: error.code },
      });
    default:
      return new SvcError('config_invalid', `svc cannot write its ${what} ${dir}: ${error.message}`, {
        hint: `Check the folder and its disk, ${change}`,
        details: { path: dir, errno: error.code ?? null },
      });
  }
}
