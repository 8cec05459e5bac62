/** The lifecycle app's versions (test/fixtures/lifecycle) and calls of its URLs, shared by the lifecycle tests. */
import path from 'node:path';
import type { DeployRequest } from '../../core/services/deployments/manager.js';
import { loadManifest, type LoadedManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE } from '../../core/platform/platform.js';

/** The folder of one version of the app: `v1`, `v2` or `broken`. */
export const fixture = (version: string) => path.join(packageRoot, 'test', 'fixtures', 'lifecycle', version);

export async function lifecycleManifests(): Promise<{ v1: LoadedManifest; v2: LoadedManifest }> {
  const [v1, v2] = await Promise.all([
    loadManifest({ target: path.join(fixture('v1'), 'app.py') }),
    loadManifest({ target: path.join(fixture('v2'), 'app.py') }),
  ]);
  return { v1, v2 };
}

export function deployRequest(manifest: LoadedManifest, extra: Partial<DeployRequest> = {}): DeployRequest {
  return {
    spec: manifest.spec,
    source: { root: manifest.root, entry: manifest.spec.entry },
    workspace: DEFAULT_WORKSPACE,
    stage: 'deployed',
    principal: null,
    ...extra,
  };
}

/** A GET with the token when given: without one, a URL nothing serves answers 401 before 404 (it tells strangers nothing). */
export async function answer(url: string, token?: string): Promise<{ status: number; version?: number; code?: string }> {
  const response = await fetch(url, token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } });
  const body = (await response.json()) as { version?: number; error?: { code: string } };
  return { status: response.status, version: body.version, code: body.error?.code };
}
