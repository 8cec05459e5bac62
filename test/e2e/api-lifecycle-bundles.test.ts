import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient, postChunked, type Call } from '../core/http/api/client.js';
import { tokenFor } from '../core/http/api/platform.js';
import { testConfig } from '../helpers/config.js';
import { bundleOf, upload, type FixtureBundle } from './api-lifecycle-helpers.js';

const MAX_BUNDLE_BYTES = 64 * 1024;
const sha256Of = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Bundle uploads over real HTTP: stored once by sha256, checked on the way in, per workspace. */
describe('API: bundle uploads', function () {
  this.timeout(60_000);
  let platform: Platform;
  let call: Call;
  let owner: string;
  let v1: FixtureBundle;
  const reports: unknown[] = [];

  before(async () => {
    platform = await startPlatform({ config: testConfig(), maxBundleBytes: MAX_BUNDLE_BYTES, report: (error) => reports.push(error) });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    v1 = await bundleOf('v1');
  });
  after(async () => platform?.close());
  afterEach(() => assert.deepEqual(reports, [], 'no unexpected errors'));

  it('stores a new bundle (201), then answers 200 created:false for the same bytes, and GET/HEAD find it', async () => {
    const missing = await call('GET', `/api/v1/bundles/${v1.sha256}`, { token: owner });
    assert.equal(missing.status, 404);
    assert.match(missing.json.error.hint, /POST \/api\/v1\/bundles/);
    const first = await upload(platform.url, owner, v1.bytes, v1.sha256);
    assert.equal(first.status, 201, JSON.stringify(first.json));
    assert.deepEqual(first.json, { sha256: v1.sha256, size: v1.bytes.length, created: true });
    const again = await upload(platform.url, owner, v1.bytes, v1.sha256);
    assert.equal(again.status, 200);
    assert.equal(again.json.created, false);
    assert.equal((await call('GET', `/api/v1/bundles/${v1.sha256}`, { token: owner })).status, 200);
    assert.equal((await call('HEAD', `/api/v1/bundles/${v1.sha256}`, { token: owner })).status, 200);
  });

  it("keeps each workspace's bundles to itself: another workspace gets 404 until it uploads the bytes itself", async () => {
    const acme = await tokenFor(platform, 'acme-bundles');
    assert.equal((await call('GET', `/api/v1/bundles/${v1.sha256}`, { token: acme.secret })).status, 404);
    const theirs = await upload(platform.url, acme.secret, v1.bytes, v1.sha256);
    assert.equal(theirs.status, 201);
    assert.equal((await call('GET', `/api/v1/bundles/${v1.sha256}`, { token: acme.secret })).status, 200);
  });

  it('refuses a body whose sha256 is not the one claimed (422 naming both)', async () => {
    const claimed = 'a'.repeat(64);
    const refused = await upload(platform.url, owner, v1.bytes, claimed);
    assert.equal(refused.status, 422);
    assert.equal(refused.json.error.code, 'bundle_invalid');
    assert.equal(refused.json.error.details.rule, 'sha256_mismatch');
    assert.ok(refused.json.error.message.includes(claimed) && refused.json.error.message.includes(v1.sha256), refused.json.error.message);
    assert.equal((await call('GET', `/api/v1/bundles/${claimed}`, { token: owner })).status, 404);
  });

  it('refuses what is not a gzip archive (422 not_gzip) and keeps nothing of it', async () => {
    const text = Buffer.from('print("not a bundle")\n');
    const refused = await upload(platform.url, owner, text, sha256Of(text));
    assert.equal(refused.status, 422);
    assert.equal(refused.json.error.code, 'bundle_invalid');
    assert.equal(refused.json.error.details.rule, 'not_gzip');
    assert.equal((await call('GET', `/api/v1/bundles/${sha256Of(text)}`, { token: owner })).status, 404);
  });

  it('answers 413 bundle_too_large past the limit, whether the length is declared or the body chunked', async () => {
    const big = Buffer.alloc(MAX_BUNDLE_BYTES + 1, 1);
    const declared = await upload(platform.url, owner, big, sha256Of(big));
    assert.equal(declared.status, 413);
    assert.equal(declared.json.error.code, 'bundle_too_large');
    const chunked = await postChunked(`${platform.url}/api/v1/bundles`, MAX_BUNDLE_BYTES * 2, {
      Authorization: `Bearer ${owner}`,
      'Content-Type': 'application/gzip',
      'X-Bundle-Sha256': 'b'.repeat(64),
    });
    assert.equal(chunked.status, 413);
    assert.equal(JSON.parse(chunked.body).error.code, 'bundle_too_large');
  });

  it('refuses a missing or malformed X-Bundle-Sha256 and a body that is not application/gzip (400)', async () => {
    const noHeader = await fetch(`${platform.url}/api/v1/bundles`, {
      method: 'POST',
      body: v1.bytes,
      headers: { Authorization: `Bearer ${owner}`, 'Content-Type': 'application/gzip' },
    });
    assert.equal(noHeader.status, 400);
    assert.equal((await upload(platform.url, owner, v1.bytes, 'not-a-sha')).status, 400);
    const json = await upload(platform.url, owner, v1.bytes, v1.sha256, 'application/json');
    assert.equal(json.status, 400);
    assert.match(json.json.error.message, /application\/gzip/);
    assert.equal((await call('GET', '/api/v1/bundles/XYZ', { token: owner })).status, 400);
  });
});
