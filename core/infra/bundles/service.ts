/**
 * The embedded path from a project folder to the code a container runs:
 * bundle it (`python -m svc.bundle`), keep the bundle by sha256 in the data
 * dir, extract it once per sha256 into `<cacheDir>/code/<sha256>/` and run
 * containers from there. Later edits of the project do not touch a running
 * deployment, and two deploys of the same code share one folder. A folder
 * this process bundled before and that has not changed since is not bundled
 * again (unchanged-folders.ts).
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SvcError } from '../../model/errors.js';
import type { SourceRef } from '../scheduler/types.js';
import { createBundle } from './create.js';
import { extractBundle } from './extract.js';
import { BundleStore, type StoredBundle } from './store.js';
import { folderKey, rememberBundle, rememberedBundle, type RememberedBundle } from './unchanged-folders.js';
import { DEFAULT_EXTRACT_LIMITS, type CodeBundles, type ExtractLimits, type PreparedSource } from './types.js';

export interface CodeBundlesOptions {
  /** Bundles are kept in `<dataDir>/bundles`. */
  readonly dataDir: string;
  /** Extracted code lives in `<cacheDir>/code/<sha256>`. */
  readonly cacheDir: string;
  /** Interpreter that runs `python -m svc.bundle`. */
  readonly python: string;
  /** Largest project bundled (sum of file sizes); the SDK's default (100 MiB) when absent. */
  readonly maxBytes?: number;
  readonly limits?: Partial<ExtractLimits>;
}

interface MadeBundle {
  readonly stored: StoredBundle;
  readonly files: number | null;
  readonly warnings: readonly string[];
}

export function createCodeBundles(
  options: CodeBundlesOptions,
): CodeBundles & { readonly store: BundleStore; codeDir(sha256: string): string; unpack(sha256: string): Promise<void> } {
  const store = BundleStore.inDataDir(options.dataDir);
  const limits: ExtractLimits = { ...DEFAULT_EXTRACT_LIMITS, ...options.limits };
  const codeRoot = path.join(options.cacheDir, 'code');
  const codeDir = (sha256: string) => {
    store.pathOf(sha256); // rejects anything but a sha256, so no path can be smuggled in
    return path.join(codeRoot, sha256);
  };

  /** The project bundled by the SDK now, and stored. */
  const bundleNow = async (root: string): Promise<MadeBundle> => {
    const scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-bundle-'));
    try {
      const created = await createBundle(root, {
        python: options.python,
        out: path.join(scratch, 'bundle.tar.gz'),
        ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }),
      });
      return { stored: await store.put(created.path, created.sha256), files: created.files, warnings: created.warnings };
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  };
  /** The bundle made earlier of the folder as it still is, in this store (copied from where it was kept); null when gone. */
  const storedCopy = async (known: RememberedBundle): Promise<MadeBundle | null> => {
    const { files, warnings } = known;
    if (await store.has(known.sha256)) {
      return { stored: { sha256: known.sha256, path: store.pathOf(known.sha256), size: known.size, existed: true }, files, warnings };
    }
    const copied = await store.put(known.path, known.sha256).catch(() => null);
    return copied === null ? null : { stored: copied, files, warnings };
  };

  return {
    store,
    codeDir,
    async prepare(source: SourceRef): Promise<PreparedSource> {
      const key = await folderKey(source.root, [options.python, options.maxBytes ?? null]);
      const known = key === null ? undefined : rememberedBundle(key);
      const made = (known && (await storedCopy(known))) ?? (await bundleNow(source.root));
      const { stored } = made;
      if (key !== null) rememberBundle(key, { ...made, sha256: stored.sha256, path: stored.path, size: stored.size });
      const dir = codeDir(stored.sha256);
      // A folder made by an earlier deploy is reused as it is. Before a first extraction, a
      // bundle stored earlier is checked again: put() only hashed the copy it was given.
      if (!(await isDirectory(dir))) {
        if (stored.existed) await store.verify(stored.sha256);
        await extractBundle(stored.path, dir, limits);
      }
      await assertHoldsModule(dir, source);
      return {
        source: { root: dir, entry: source.entry, bundleSha256: stored.sha256 },
        bundle: { sha256: stored.sha256, size: stored.size, files: made.files, warnings: made.warnings },
      };
    },
    /** Extracts a stored bundle (an upload) once, so an unsafe one is refused when it arrives, not at its deploy. */
    async unpack(sha256: string): Promise<void> {
      const dir = codeDir(sha256);
      if (!(await isDirectory(dir))) await extractBundle(store.pathOf(sha256), dir, limits);
    },
    async fromStore(sha256: string, entry: string): Promise<PreparedSource> {
      const file = store.pathOf(sha256); // bad_request unless a sha256
      const found = await stat(file).catch(() => null);
      if (found === null) {
        throw new SvcError('not_found', `no bundle ${sha256} is stored (${file} is not there).`, {
          hint: 'Upload it first (POST /api/v1/bundles); a deployed version whose file went missing comes back from a backup (svc server restore) or a new deploy.',
        });
      }
      const dir = codeDir(sha256);
      // Uploads were hashed on the way in; the file may have changed on disk since, so check before a first extraction.
      if (!(await isDirectory(dir))) {
        await store.verify(sha256);
        await extractBundle(file, dir, limits);
      }
      await assertHoldsModule(dir, { root: file, entry });
      return { source: { root: dir, entry, bundleSha256: sha256 }, bundle: { sha256, size: found.size, files: null, warnings: [] } };
    },
  };
}

/** The manifest imported the module from the project; if the bundle lacks it, `.svcignore` left it out. */
async function assertHoldsModule(dir: string, source: SourceRef): Promise<void> {
  const top = source.entry.split('.')[0]!;
  const names = await readdir(dir);
  if (names.some((name) => name === top || name.startsWith(`${top}.`))) return;
  throw new SvcError(
    'bundle_invalid',
    `the bundle of ${source.root} does not hold the module ${source.entry}: is it excluded by .svcignore?`,
    {
      hint: `Remove the pattern that matches ${top}.py (or the ${top}/ package) from ${path.join(source.root, '.svcignore')}.`,
      details: { entry: null, rule: 'missing_module' },
    },
  );
}

async function isDirectory(dir: string): Promise<boolean> {
  const found = await stat(dir).catch(() => null);
  return found !== null && found.isDirectory();
}
