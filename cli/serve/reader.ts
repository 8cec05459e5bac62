/**
 * Reads the project for `svc serve` — its manifest and its bundle, or the
 * news that it is the version already running — from the warm helper
 * (core/infra/manifest-loader/warm-loader.ts), or the cold way (`python -m svc.bundle`,
 * then `python -m svc.manifest`) when there is none or it died. Bundles are
 * written to a scratch folder; the caller stores them and deletes the file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createBundle } from '../../core/infra/bundles/create.js';
import { SvcError } from '../../core/model/errors.js';
import { loadManifest, resolveManifestTarget } from '../../core/infra/manifest-loader/load.js';
import { HelperUnavailable, WarmLoader, type ProjectRead } from '../../core/infra/manifest-loader/warm-loader.js';
import { listFolders } from './watcher.js';

export type { ProjectRead };

export interface ProjectReader {
  /** The project as it is now; `unchanged` is the digest of the version running (null: none yet). */
  read(unchanged: string | null): Promise<ProjectRead>;
  close(): void;
}

export interface ProjectReaderOptions {
  readonly target: string;
  readonly python: string;
  /** Use the warm helper (default); false reads the cold way every time. */
  readonly warm: boolean;
  /** Said once when the helper is gone and reads fall back to the cold way. */
  readonly warn: (message: string) => void;
  /** The helper's own stderr lines. */
  readonly log: (line: string) => void;
  /** svc's own folders (data and cache dirs): never part of a snapshot, never watched. */
  readonly exclude: readonly string[];
}

export function createProjectReader(options: ProjectReaderOptions): ProjectReader {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'svc-serve-'));
  let serial = 0;
  let closed = false;
  let helper: WarmLoader | undefined = options.warm ? new WarmLoader({ python: options.python, log: options.log }) : undefined;

  async function cold(unchanged: string | null, out: string): Promise<ProjectRead> {
    const target = await resolveManifestTarget({ target: options.target, python: options.python });
    const bundle = await createBundle(target.root, { python: options.python, out });
    // The bundle is deterministic: its sha256 is this reader's digest.
    const dirs = await listFolders(target.root, options.exclude);
    if (bundle.sha256 === unchanged) return { unchanged: true, digest: bundle.sha256, dirs };
    const manifest = await loadManifest({ target: options.target, python: options.python });
    return { unchanged: false, digest: bundle.sha256, dirs, manifest, bundle };
  }

  return {
    async read(unchanged) {
      const out = path.join(scratch, `bundle-${++serial}.tar.gz`);
      if (helper) {
        try {
          return await helper.read({ target: options.target, unchanged, out, exclude: options.exclude });
        } catch (error) {
          if (!(error instanceof HelperUnavailable)) throw error;
          if (closed) throw new SvcError('shutting_down', 'svc serve is stopping.');
          options.warn(`${error.message}; reading the project with a new Python process on each change from now on`);
          helper.close();
          helper = undefined;
        }
      }
      return cold(unchanged, out);
    },
    /** Stops the helper: a read in progress ends with shutting_down. */
    close() {
      closed = true;
      helper?.close();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}
