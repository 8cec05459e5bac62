/**
 * The owner token: the first credential of a fresh install, kept in
 * `<dataDir>/owner-token` so that `svc server` and the CLI on the same
 * machine share it. Created once, atomically; never overwritten.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { SvcError } from '../../model/errors.js';
import { createExclusive } from '../../infra/files/create-exclusive.js';
import { readPrivateFile } from '../../infra/files/private-file.js';
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
  const read = await readPrivateFile(
    file,
    (problem) => corrupt(file, problem),
    'If others may have read it, delete the file and restart svc to rotate the owner token.',
  );
  if (read === null) return null;
  const secret = read.text.trim();
  if (!looksLikeToken(secret)) throw corrupt(file, 'does not hold a valid svc token');
  return { secret, warnings: [...read.warnings] };
}

function corrupt(file: string, problem: string): SvcError {
  return new SvcError('config_invalid', `${file} ${problem}`, {
    hint: `Delete ${file} and restart svc to create a new owner token; svc never overwrites it itself.`,
    details: { path: file },
  });
}
