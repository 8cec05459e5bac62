/** Bundles of the lifecycle fixtures, made as the CLI makes them, and their upload over the API. */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createBundle } from '../../core/infra/bundles/create.js';
import { checkAnswer } from '../core/http/api/answer-check.js';
import { tempDir } from '../helpers/config.js';
import assert from 'node:assert/strict';
import { fixture, lifecycleManifests } from './lifecycle-helpers.js';

export interface FixtureBundle {
  readonly sha256: string;
  readonly bytes: Buffer;
}

export async function bundleOf(version: string): Promise<FixtureBundle> {
  const created = await createBundle(fixture(version), { out: path.join(tempDir('svc-bundle-'), 'bundle.tar.gz') });
  return { sha256: created.sha256, bytes: await readFile(created.path) };
}

export interface Upload {
  readonly status: number;
  readonly json: any;
}

/** POST /api/v1/bundles with the bytes as they are and the sha256 they claim. */
export async function upload(
  baseUrl: string,
  token: string,
  bytes: Uint8Array,
  sha256: string,
  contentType = 'application/gzip',
): Promise<Upload> {
  const response = await fetch(`${baseUrl}/api/v1/bundles`, {
    method: 'POST',
    body: bytes,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': contentType, 'X-Bundle-Sha256': sha256 },
  });
  const text = await response.text();
  checkAnswer('POST', '/api/v1/bundles', response.status, response.headers.get('content-type'), text);
  return { status: response.status, json: JSON.parse(text) };
}

/** Uploads version `version` of the lifecycle fixture and deploys it as the app `life` over the API; fails the test if either is refused. */
export async function deployLifecycle(baseUrl: string, token: string, version: 'v1' | 'v2' = 'v1'): Promise<void> {
  const [manifests, bundle] = await Promise.all([lifecycleManifests(), bundleOf(version)]);
  const uploaded = await upload(baseUrl, token, bundle.bytes, bundle.sha256);
  assert.ok(uploaded.status === 201 || uploaded.status === 200, `upload: ${uploaded.status}`);
  const deployed = await fetch(`${baseUrl}/api/v1/apps/life/deployments`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ manifest: manifests[version].raw, bundle: bundle.sha256 }),
  });
  assert.equal(deployed.status, 201, await deployed.text());
}
