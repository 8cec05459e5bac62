/**
 * What `svc deploy` and `svc shell` send first: the app's manifest (its Python read by the SDK) and its
 * project folder bundled and uploaded, unless the server has that bundle already.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createBundle } from '../../core/infra/bundles/create.js';
import { formatBytes } from '../../core/model/format-bytes.js';
import { loadManifestOf, resolveManifestTarget, type LoadedManifest } from '../../core/infra/manifest-loader/load.js';
import type { AppSpec } from '../../core/model/workload/types.js';
import { API_PREFIX, type ApiClient, dropBody } from '../api-client.js';
import type { CommandContext } from '../context.js';
import type { Output } from '../output.js';

export interface UploadedCode<T> {
  readonly manifest: LoadedManifest;
  /** The sha256 of the uploaded bundle. */
  readonly bundle: string;
  /** What `check` answered. */
  readonly checked: T;
}

/**
 * Reads `target` (a file or module), bundles its project folder and uploads it; `check` sees the spec
 * before anything is bundled or sent (a wrong workload name stops there).
 */
export async function uploadCode<T>(
  context: CommandContext,
  client: ApiClient,
  target: string,
  check: (spec: AppSpec) => T,
): Promise<UploadedCode<T>> {
  const { out } = context;
  out.step(`reading ${target}`);
  const python = context.env.SVC_PYTHON;
  const manifestTarget = await resolveManifestTarget({ target, cwd: context.cwd, python });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-upload-'));
  // Both Python processes at once: the bundle needs only the project folder, not the manifest.
  const bundling = createBundle(manifestTarget.root, { out: path.join(dir, 'bundle.tar.gz'), python });
  bundling.catch(() => {}); // awaited after the manifest, so that a broken app is reported as such
  try {
    const manifest = await loadManifestOf(manifestTarget);
    for (const line of manifest.logs) out.log('import', line);
    const { spec } = manifest;
    const checked = check(spec);
    out.done(`app ${spec.name}: ${spec.workloads.length} workload${spec.workloads.length === 1 ? '' : 's'}`);

    out.step(`bundling ${manifest.root}`);
    const bundle = await bundling;
    for (const warning of bundle.warnings) out.warn(`bundle: ${warning}`);
    out.done(`bundle ${bundle.sha256.slice(0, 12)}: ${bundle.files} file${bundle.files === 1 ? '' : 's'}, ${formatBytes(bundle.size)}`);
    await uploadBundle(out, client, bundle);
    return { manifest, bundle: bundle.sha256, checked };
  } finally {
    await bundling.catch(() => {}); // its file is written (or not) before the folder goes
    await rm(dir, { recursive: true, force: true });
  }
}

/** Uploads the bundle unless the server has it already (the same sha256). */
async function uploadBundle(
  out: Output,
  client: ApiClient,
  bundle: { readonly sha256: string; readonly size: number; readonly path: string },
): Promise<void> {
  if (await client.exists(`${API_PREFIX}/bundles/${bundle.sha256}`)) {
    out.done(`${client.server} has this bundle already: nothing to upload`);
    return;
  }
  out.step(`uploading ${formatBytes(bundle.size)} to ${client.server}`);
  const bytes = await readFile(bundle.path);
  await client
    .send('POST', `${API_PREFIX}/bundles`, {
      body: bytes,
      headers: { 'Content-Type': 'application/gzip', 'X-Bundle-Sha256': bundle.sha256 },
      long: true,
    })
    .then(dropBody);
  out.done('uploaded');
}
