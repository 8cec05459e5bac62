/**
 * The svc Python package as it goes into an image: its files (no caches),
 * and a digest of them, so that a changed SDK makes a new runtime layer.
 */
import { createHash } from 'node:crypto';
import { cp, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { sdkPythonPath } from '../../../model/paths.js';

const PACKAGE = path.join(sdkPythonPath, 'svc');

function keep(name: string): boolean {
  return name !== '__pycache__' && !name.endsWith('.pyc');
}

let digest: Promise<string> | null = null;

/** sha256 over every kept file's path and bytes, computed once per process. */
export function sdkDigest(): Promise<string> {
  digest ??= (async () => {
    const hash = createHash('sha256');
    const files = (await readdir(PACKAGE, { recursive: true, withFileTypes: true }))
      .filter((entry) => entry.isFile())
      .map((entry) => path.join(entry.parentPath, entry.name))
      .filter((file) => path.relative(PACKAGE, file).split(path.sep).every(keep))
      .sort();
    for (const file of files) hash.update(`${path.relative(PACKAGE, file)}\0`).update(await readFile(file));
    return hash.digest('hex');
  })();
  return digest;
}

/** Copies the package to `<dir>/svc`. */
export async function copySdk(dir: string): Promise<void> {
  await cp(PACKAGE, path.join(dir, 'svc'), { recursive: true, filter: (source) => keep(path.basename(source)) });
}
