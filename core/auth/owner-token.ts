/**
 * The owner token: the first credential of a fresh install, kept in
 * `<dataDir>/owner-token` so that `svc server` and the CLI on the same
 * machine share it. Created once, atomically; never overwritten.
 */
import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import path from 'node:path';
import { SvcError } from '../errors.js';
import { createExclusive } from '../files/create-exclusive.js';
import { generateToken, looksLikeToken } from './tokens.js';

export interface OwnerToken {
  readonly secret: string;
  /** True when this call created the file (show the secret to the user once). */
  readonly created: boolean;
  readonly path: string;
  /** Things the operator should know, e.g. that loose file permissions were tightened. */
  readonly warnings: string[];
}

const FILE_NAME = 'owner-token';

/**
 * Reads the owner token, or creates it (data dir 0700, file 0600). Safe to
 * call from several processes at once: exactly one creates the file and all
 * return the same secret.
 */
export async function ensureOwnerToken(dataDir: string): Promise<OwnerToken> {
  const file = path.join(dataDir, FILE_NAME);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  // Two rounds cover losing the creation race; a third would mean the file vanishes as we read it.
  for (let round = 0; round < 3; round++) {
    const existing = await readExisting(file);
    if (existing !== null) return { ...existing, created: false, path: file };
    const { secret } = generateToken();
    if (await createExclusive(file, `${secret}\n`)) return { secret, created: true, path: file, warnings: [] };
  }
  throw new SvcError('internal', `${file} keeps appearing and disappearing while svc reads it`);
}

/** The token in `file`, null when there is no file. Tightens loose permissions instead of failing. */
async function readExisting(file: string): Promise<{ secret: string; warnings: string[] } | null> {
  let handle;
  try {
    // O_NOFOLLOW: a symlink planted in the data dir must not redirect where the secret is read from.
    handle = await open(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw corrupt(file, 'is a symbolic link');
    throw error;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw corrupt(file, 'is not a regular file');
    const warnings: string[] = [];
    const mode = info.mode & 0o777;
    if ((mode & 0o077) !== 0) {
      await handle.chmod(0o600);
      warnings.push(`${file} was open to other users (mode ${mode.toString(8).padStart(4, '0')}); tightened it to 0600. ` +
        'If others may have read it, delete the file and restart svc to rotate the owner token.');
    }
    const secret = (await handle.readFile('utf8')).trim();
    if (!looksLikeToken(secret)) throw corrupt(file, 'does not hold a valid svc token');
    return { secret, warnings };
  } finally {
    await handle.close();
  }
}

function corrupt(file: string, problem: string): SvcError {
  return new SvcError('config_invalid', `${file} ${problem}`, {
    hint: `Delete ${file} and restart svc to create a new owner token; svc never overwrites it itself.`,
    details: { path: file },
  });
}
