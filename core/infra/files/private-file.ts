/**
 * Reads a file that holds a secret (the owner token, `svc login`'s
 * credentials): never through a symbolic link (one planted next to it must
 * not redirect where the secret is read from), only a regular file, and one
 * open to other users is tightened to 0600 with a warning instead of failing.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { SvcError } from '../../model/errors.js';

export interface PrivateFile {
  readonly text: string;
  /** What the reader should tell the user (a file that was open to others). */
  readonly warnings: readonly string[];
}

/**
 * The file's text, or null when there is none. `damaged(problem)` makes the
 * error for a link, a non-regular file or an unreadable one; `afterTightening`
 * says what to do when the file was open to others.
 */
export async function readPrivateFile(
  file: string,
  damaged: (problem: string) => SvcError,
  afterTightening: string,
): Promise<PrivateFile | null> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw damaged('is a symbolic link');
    if (code === 'EACCES') throw damaged('cannot be read (permission denied)');
    throw error;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw damaged('is not a regular file');
    const warnings: string[] = [];
    const mode = info.mode & 0o777;
    if ((mode & 0o077) !== 0) {
      await handle.chmod(0o600);
      warnings.push(
        `${file} was open to other users (mode ${mode.toString(8).padStart(4, '0')}); tightened it to 0600. ${afterTightening}`,
      );
    }
    return { text: await handle.readFile('utf8'), warnings };
  } finally {
    await handle.close();
  }
}
