/**
 * An image's requirements files (`ImageSpec.requirementsFiles`) as files pip
 * can read with `-r`: each written into a fresh private folder for the call
 * (in a folder of its own, since two may share a name), removed afterwards.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { RequirementsFile } from '../../model/workload/types.js';

/** Runs `use` with the paths of `files` written out, in their order; no folder at all without files. */
export async function withRequirementFiles<T>(files: readonly RequirementsFile[], use: (paths: string[]) => Promise<T>): Promise<T> {
  if (files.length === 0) return use([]);
  const root = await mkdtemp(path.join(os.tmpdir(), 'svc-requirements-'));
  try {
    const paths: string[] = [];
    for (const [index, file] of files.entries()) {
      const dir = path.join(root, String(index));
      await mkdir(dir);
      // The manifest check allows only a base name; basename() keeps a folder out whatever comes.
      const written = path.join(dir, path.basename(file.name));
      await writeFile(written, file.content, { encoding: 'utf8', mode: 0o600 });
      paths.push(written);
    }
    return await use(paths);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
