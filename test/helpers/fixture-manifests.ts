/**
 * loadManifest() for the e2e tests: the manifest of a project kept in this
 * repository (an example, a fixture) is made once per mocha worker and handed
 * out again while the project's files are what they were. The e2e files load
 * the same few projects about two hundred times a run, each a Python start
 * and an import of the app (0.3 s of a core). The key is the options and the
 * project folder's content (every file's path and bytes), so a project a test
 * edits, or one in a temporary folder, is loaded afresh. What loading does by
 * itself (errors, time-outs, logs) is tested with the real function in
 * test/core/infra/manifest-loader/.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { loadManifest as loadFresh, type LoadedManifest, type LoadManifestOptions } from '../../core/infra/manifest-loader/load.js';
import { packageRoot } from '../../core/model/paths.js';

export type { LoadedManifest };

/** Folders whose projects the cache keeps: the repository's own, never a test's temporary copy. */
const KEPT = ['examples', 'test/fixtures', 'sdk/python/tests/fixtures'].map((folder) => path.join(packageRoot, folder) + path.sep);
/** A bigger folder is not worth hashing on each load. */
const MAX_FILES = 500;

const loaded = new Map<string, Promise<LoadedManifest>>();

export async function loadManifest(options: LoadManifestOptions): Promise<LoadedManifest> {
  const key = cacheKey(options);
  if (key === null) return loadFresh(options);
  let manifest = loaded.get(key);
  if (manifest === undefined) {
    manifest = loadFresh(options);
    loaded.set(key, manifest);
    // A failure is not kept: the next caller sees its own.
    manifest.catch(() => loaded.delete(key));
  }
  return structuredClone(await manifest);
}

function cacheKey(options: LoadManifestOptions): string | null {
  if (!options.target.endsWith('.py')) return null;
  const file = path.resolve(options.cwd ?? process.cwd(), options.target);
  if (!KEPT.some((folder) => file.startsWith(folder))) return null;
  const digest = folderDigest(path.dirname(file));
  if (digest === null) return null;
  const { python = process.env.SVC_PYTHON ?? 'python3', timeoutMs = null } = options;
  return JSON.stringify([file, python, timeoutMs, digest]);
}

/** The sha256 of every file's path and bytes under `root` (caches left out), or null for a folder too big or unreadable. */
function folderDigest(root: string): string | null {
  const hash = createHash('sha256');
  let files = 0;
  try {
    const names = readdirSync(root, { recursive: true, encoding: 'utf8' }).sort();
    for (const name of names) {
      if (name.split(path.sep).includes('__pycache__')) continue;
      let bytes: Buffer;
      try {
        bytes = readFileSync(path.join(root, name));
      } catch {
        continue; // a folder
      }
      if (++files > MAX_FILES) return null;
      hash.update(`${name}\0${bytes.length}\0`).update(bytes);
    }
  } catch {
    return null;
  }
  return hash.digest('hex');
}
