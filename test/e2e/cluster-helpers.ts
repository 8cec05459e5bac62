/** Shared by the end-to-end tests of svc on the Nomad and Consul stand-ins. */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ServerConfig } from '../../config/schema.js';
import { createBundle } from '../../core/infra/bundles/create.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import type { Platform } from '../../core/platform/platform.js';
import { packageRoot } from '../../core/model/paths.js';
import { apiClient } from '../core/http/api/client.js';
import { TEST_SECRETS_KEY, tempDir, testConfig } from '../helpers/config.js';
import { startConsulStandin, type ConsulStandin } from '../standins/consul/index.js';
import { startNomadStandin, type NomadStandin } from '../standins/nomad/index.js';
import { upload } from './api-lifecycle-helpers.js';

/** test/fixtures/cluster: `hello` and `slow`, each answer naming the Nomad allocation and job that served it. */
export const CLUSTER_APP = path.join(packageRoot, 'test', 'fixtures', 'cluster');

export interface Standins {
  readonly consul: ConsulStandin;
  readonly nomad: NomadStandin;
  /** svc's config for them: Nomad jobs, the Consul registry, Consul KV. */
  config(overrides?: Partial<ServerConfig>): ServerConfig;
  /** Purges what is left, then stops both. */
  close(): Promise<void>;
}

export async function startStandins(): Promise<Standins> {
  const consul = await startConsulStandin({ jitter: false });
  const nomad = await startNomadStandin({ dataDir: tempDir('svc-nomad-'), consulUrl: consul.url });
  return {
    consul,
    nomad,
    // The stand-in runs raw_exec and docker tasks only; exec (svc's default) runs against real Nomad in test:cluster.
    config: (overrides = {}) =>
      testConfig({
        scheduler: 'nomad',
        registry: 'consul',
        state: 'consul',
        nomadAddr: nomad.url,
        consulAddr: consul.url,
        nomadDriver: 'raw_exec',
        queueTimeoutSeconds: 60,
        secretsKey: TEST_SECRETS_KEY,
        ...overrides,
      }),
    async close() {
      for (const job of await svcJobs(nomad).catch(() => [])) await fetch(`${nomad.url}/v1/job/${job.ID}?purge=true`, { method: 'DELETE' });
      await nomad.close();
      await consul.close();
    },
  };
}

export interface ListedJob {
  readonly ID: string;
  readonly Status: string;
  readonly Meta: Record<string, string> | null;
}

export async function svcJobs(nomad: NomadStandin): Promise<ListedJob[]> {
  return (await (await fetch(`${nomad.url}/v1/jobs?prefix=svc-&meta=true`)).json()) as ListedJob[];
}

export async function nomadJson(nomad: NomadStandin, p: string): Promise<{ status: number; json: any }> {
  const response = await fetch(`${nomad.url}${p}`);
  const text = await response.text();
  return { status: response.status, json: response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
}

/** Uploads the cluster app's bundle; returns the body that deploys it (`POST /api/v1/apps/cluster/deployments`). */
export function uploadClusterApp(platform: Platform): Promise<{ manifest: unknown; bundle: string }> {
  return uploadProject(platform, CLUSTER_APP);
}

/** Uploads the bundle of the project in `dir` (its `app.py`); returns the body that deploys it. */
export async function uploadProject(platform: Platform, dir: string): Promise<{ manifest: unknown; bundle: string }> {
  const manifest = await loadManifest({ target: path.join(dir, 'app.py') });
  const bundle = await createBundle(dir, { out: path.join(tempDir('svc-bundle-'), 'bundle.tar.gz') });
  const uploaded = await upload(platform.url, platform.ownerToken.secret, await readFile(bundle.path), bundle.sha256);
  assert.ok(uploaded.status === 201 || uploaded.status === 200, JSON.stringify(uploaded.json));
  return { manifest: manifest.raw, bundle: bundle.sha256 };
}

/** Uploads the cluster app's bundle and deploys it through the API; returns each workload's URL. */
export async function deployClusterApp(platform: Platform): Promise<{ urls: Record<string, string>; sha256: string; warnings: string[] }> {
  const body = await uploadClusterApp(platform);
  const bundle = { sha256: body.bundle };
  const deployed = await apiClient(platform.url)('POST', '/api/v1/apps/cluster/deployments', {
    token: platform.ownerToken.secret,
    json: body,
  });
  assert.equal(deployed.status, 201, deployed.text);
  const urls = Object.fromEntries(
    deployed.json.deployments.map((d: { workload: string; urls: { path: string } }) => [d.workload, d.urls.path]),
  );
  return { urls, sha256: bundle.sha256, warnings: deployed.json.warnings };
}

export async function getJson(url: string, token?: string): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(url, token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

/** Every call to the Consul stand-in fails (500) from now until `end()`: Consul away, as svc sees it. */
export function consulOutage(standins: Standins): { end(): void } {
  let on = true;
  // failNext matches with `test`: a pattern that stops matching ends the fault.
  const everything = Object.assign(/./, { test: (text: string) => on && text.length > 0 });
  standins.consul.failNext({ match: everything, count: Number.MAX_SAFE_INTEGER });
  return { end: () => void (on = false) };
}
