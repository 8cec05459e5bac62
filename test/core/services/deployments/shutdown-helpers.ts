/** The shutdown tests' app (test/fixtures/shutdown), deployed over the API as the CLI deploys, and its gated requests. */
import { existsSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createBundle } from '../../../../core/infra/bundles/create.js';
import { loadManifest } from '../../../../core/infra/manifest-loader/load.js';
import { packageRoot } from '../../../../core/model/paths.js';
import { apiClient, type Answer } from '../../http/api/client.js';
import { tempDir } from '../../../helpers/config.js';
import { until } from '../../../helpers/until.js';

export const haltApp = path.join(packageRoot, 'test', 'fixtures', 'shutdown');

/** A bound on each wait of the shutdown tests (a start may build the app's environment), under their mocha timeout of 120 s. */
export const SHUTDOWN_WAIT_MS = 110_000;

/** Uploads the app's bundle and deploys it (POST /api/v1/apps/halt/deployments); the answer as the API gives it. */
export async function deployHalt(baseUrl: string, token: string): Promise<Answer> {
  const [manifest, bundle] = await Promise.all([
    loadManifest({ target: path.join(haltApp, 'app.py') }),
    createBundle(haltApp, { out: path.join(tempDir('svc-bundle-'), 'bundle.tar.gz') }),
  ]);
  const uploaded = await fetch(`${baseUrl}/api/v1/bundles`, {
    method: 'POST',
    body: await readFile(bundle.path),
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/gzip', 'X-Bundle-Sha256': bundle.sha256 },
  });
  if (uploaded.status !== 201 && uploaded.status !== 200)
    throw new Error(`bundle upload answered ${uploaded.status}: ${await uploaded.text()}`);
  return apiClient(baseUrl)('POST', '/api/v1/apps/halt/deployments', { token, json: { manifest: manifest.raw, bundle: bundle.sha256 } });
}

/** A gate for `hold`: its request is in flight once `entered()`, and answers once `open()` was called. */
export function gate(): { path: string; entered: () => Promise<void>; open: () => void } {
  const file = path.join(tempDir('svc-gate-'), 'gate');
  return {
    path: file,
    entered: async () => {
      await until('the gated request to enter', () => existsSync(`${file}.entered`), SHUTDOWN_WAIT_MS);
    },
    open: () => writeFileSync(file, ''),
  };
}
