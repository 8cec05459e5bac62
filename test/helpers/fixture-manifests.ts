/**
 * loadManifest() for the e2e tests: the manifest of a project kept in this
 * repository (an example, a fixture) is made once per mocha worker and handed
 * out again while the project's files are what they were. The e2e files load
 * the same few projects about two hundred times a run, each a Python start
 * and an import of the app (0.3 s of a core). The key is the options and the
 * project folder as the bundler's memory of unchanged folders sees it
 * (core/infra/bundles/unchanged-folders.ts: every entry's path, size, times
 * and inode), and the environment the app is imported with, so a project a
 * test edits, one in a temporary folder, or one imported with other
 * variables set is loaded afresh. What loading does by
 * itself (errors, time-outs, logs) is tested with the real function in
 * test/core/infra/manifest-loader/.
 */
import path from 'node:path';
import { folderKey } from '../../core/infra/bundles/unchanged-folders.js';
import { loadManifest as loadFresh, type LoadedManifest, type LoadManifestOptions } from '../../core/infra/manifest-loader/load.js';
import { packageRoot } from '../../core/model/paths.js';

export type { LoadedManifest };

/** Folders whose projects the cache keeps: the repository's own, never a test's temporary copy. */
const KEPT = ['examples', 'test/fixtures', 'sdk/python/tests/fixtures'].map((folder) => path.join(packageRoot, folder) + path.sep);

const loaded = new Map<string, Promise<LoadedManifest>>();

export async function loadManifest(options: LoadManifestOptions): Promise<LoadedManifest> {
  const key = await cacheKey(options);
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

async function cacheKey(options: LoadManifestOptions): Promise<string | null> {
  if (!options.target.endsWith('.py')) return null;
  const file = path.resolve(options.cwd ?? process.cwd(), options.target);
  if (!KEPT.some((folder) => file.startsWith(folder))) return null;
  const { python = process.env.SVC_PYTHON ?? 'python3', timeoutMs = null } = options;
  // The app runs with this process's environment when it is imported, and may read it (a secret's value from os.environ).
  const environment = Object.entries(process.env).sort(([a], [b]) => a.localeCompare(b));
  return folderKey(path.dirname(file), [file, python, timeoutMs, environment]);
}
