import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_MAX_BUNDLE_BYTES } from '../../core/http/api/index.js';
import { controlPlaneRoutes } from '../../core/http/control-plane-routes.js';
import { createArtifactUrls, type ArtifactUrls } from '../../core/infra/bundles/artifact-url.js';
import { createCodeBundles } from '../../core/infra/bundles/service.js';
import { SvcError } from '../../core/model/errors.js';
import { Admission } from '../../core/traffic/gateway/admission.js';
import { createGateway } from '../../core/traffic/gateway/app.js';
import { UpstreamPools } from '../../core/traffic/gateway/proxy.js';
import { RouteTable } from '../../core/traffic/gateway/route-table.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { createEmbeddedRegistry } from '../../core/infra/registry/embedded.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { testConfig } from '../helpers/config.js';
import { bundleOf, upload, type FixtureBundle } from './api-lifecycle-helpers.js';

const sha256Of = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const HINT = /Nomad fetches this URL when an allocation starts; svc signs a new one on every submit — redeploy or scale again/;

/** The path and query of a signed URL, for the API client. */
const pathOf = (url: string) => {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
};

/**
 * The signed bundle download a Nomad task's `artifact` block makes, over real HTTP. Bundles
 * are uploaded to a real platform; the artifact route is served by a second gateway on the
 * same data dir whose control-plane routes get the signer, as startPlatform passes it once
 * it is given an artifact secret (until then the platform's own route answers 404).
 */
describe('API: signed bundle artifact URLs', function () {
  this.timeout(60_000);
  let platform: Platform;
  let owner: string;
  let v1: FixtureBundle;
  let server: http.Server;
  let serverUrl: string;
  let call: Call;
  let urls: ArtifactUrls;
  let clockOffsetMs = 0;
  const reports: unknown[] = [];
  const closers: (() => Promise<void> | void)[] = [];

  before(async () => {
    platform = await startPlatform({ config: testConfig(), report: (error) => reports.push(error) });
    owner = platform.ownerToken.secret;
    v1 = await bundleOf('v1');
    assert.equal((await upload(platform.url, owner, v1.bytes, v1.sha256)).status, 201);

    urls = createArtifactUrls({ secret: Buffer.alloc(32, 42), ttlSeconds: 600, now: () => Date.now() + clockOffsetMs });
    const { config } = platform;
    const bundles = createCodeBundles({ dataDir: config.dataDir, cacheDir: config.cacheDir, python: config.python });
    // Any use of these fails the test: this server has none.
    const unused = <T extends object>(what: string): T =>
      new Proxy({} as T, {
        get: () => {
          throw new SvcError('internal', `${what} is not part of this test server`);
        },
      });
    const api = controlPlaneRoutes({
      plugins: platform.plugins,
      controlPlane: platform.controlPlane,
      deployments: platform.deployments,
      bundles,
      maxBundleBytes: DEFAULT_MAX_BUNDLE_BYTES,
      autoscaler: platform.autoscaler,
      lastHour: unused('lastHour'),
      quotas: unused('quotas'),
      containers: platform.driver,
      logs: platform.deploymentLogs,
      runs: unused('runs'),
      volumes: unused('volumes'),
      maxVolumeFileBytes: 1024,
      usagePrices: null,
      usageRetentionDays: 90,
      calls: unused('calls'),
      callGroups: unused('callGroups'),
      maps: unused('maps'),
      previews: unused('previews'),
      maxCallBytes: config.maxBodyBytes,
      publicUrl: null,
      artifacts: urls,
    });
    const registry = createEmbeddedRegistry();
    const upstreams = new UpstreamPools(registry);
    const admission = new Admission(registry);
    const gateway = createGateway({
      routes: new RouteTable(),
      upstreams,
      admission,
      plugins: platform.plugins,
      report: (error) => reports.push(error),
      platformRoutes: api,
    });
    server = http.createServer(gateway.handleRequest);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    call = apiClient(serverUrl);
    closers.push(
      () => new Promise<void>((resolve) => server.close(() => resolve())),
      () => admission.close(),
      () => upstreams.close(),
      () => registry.close(),
    );
  });
  after(async () => {
    for (const close of closers) await close();
    await platform?.close();
  });
  afterEach(() => {
    clockOffsetMs = 0;
    assert.deepEqual(reports, [], 'no unexpected errors');
  });

  it('downloads the exact bytes of an uploaded bundle with no token, with the documented headers', async () => {
    const url = urls.url(serverUrl, v1.sha256);
    const response = await fetch(url);
    assert.equal(response.status, 200);
    const bytes = new Uint8Array(await response.arrayBuffer());
    assert.equal(sha256Of(bytes), v1.sha256);
    assert.equal(bytes.length, v1.bytes.length);
    assert.equal(response.headers.get('content-type'), 'application/gzip');
    assert.equal(response.headers.get('content-length'), String(v1.bytes.length));
    assert.equal(response.headers.get('cache-control'), 'private, max-age=0');
    assert.equal(response.headers.get('etag'), `"${v1.sha256}"`);
  });

  it('answers HEAD with the same headers and no body', async () => {
    const answer = await call('HEAD', pathOf(urls.url(serverUrl, v1.sha256)));
    assert.equal(answer.status, 200);
    assert.equal(answer.text, '');
    assert.equal(answer.headers.get('content-type'), 'application/gzip');
    assert.equal(answer.headers.get('content-length'), String(v1.bytes.length));
    assert.equal(answer.headers.get('etag'), `"${v1.sha256}"`);
    assert.equal(answer.headers.get('cache-control'), 'private, max-age=0');
  });

  it("does not take a bearer token instead of the signature (403), even the owner's", async () => {
    for (const method of ['GET', 'HEAD']) {
      const answer = await call(method, `/api/v1/bundles/${v1.sha256}/artifact`, { token: owner });
      assert.equal(answer.status, 403, method);
      assert.equal(answer.headers.get('www-authenticate'), null);
      if (method === 'GET') {
        assert.equal(answer.json.error.code, 'artifact_url_invalid');
        assert.equal(answer.json.error.details.reason, 'missing');
        assert.match(answer.json.error.message, /not signed by this server/);
        assert.match(answer.json.error.hint, HINT);
      }
    }
  });

  it("refuses a tampered signature and one signed for another bundle (403, svc's error shape)", async () => {
    const signed = new URL(urls.url(serverUrl, v1.sha256));
    const signature = signed.searchParams.get('signature')!;
    signed.searchParams.set('signature', (signature[0] === 'f' ? 'e' : 'f') + signature.slice(1));
    const tampered = await call('GET', pathOf(signed.href), { token: owner });
    assert.equal(tampered.status, 403);
    assert.deepEqual(Object.keys(tampered.json), ['error']);
    assert.equal(tampered.json.error.code, 'artifact_url_invalid');
    assert.equal(tampered.json.error.details.reason, 'signature_mismatch');
    assert.match(tampered.json.error.message, /not signed by this server/);
    assert.match(tampered.json.error.hint, HINT);

    const other = new URL(urls.url(serverUrl, 'e'.repeat(64)));
    const moved = await call('GET', `/api/v1/bundles/${v1.sha256}/artifact${other.search}`);
    assert.equal(moved.status, 403);
    assert.equal(moved.json.error.details.reason, 'signature_mismatch');
  });

  it('refuses an expired URL (403 saying when), though it was valid before', async () => {
    const path = pathOf(urls.url(serverUrl, v1.sha256));
    assert.equal((await call('HEAD', path)).status, 200);
    clockOffsetMs = 1_201_000; // past the end of the window after the one it was signed in (TTL 600 s)
    const expired = await call('GET', path);
    assert.equal(expired.status, 403);
    assert.equal(expired.json.error.code, 'artifact_url_invalid');
    assert.equal(expired.json.error.details.reason, 'expired');
    assert.match(expired.json.error.message, /^this artifact URL expired at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z\.$/);
    assert.match(expired.json.error.hint, HINT);
  });

  it('answers 404 not_found for a validly signed bundle that is not stored', async () => {
    const missing = 'd'.repeat(64);
    const answer = await call('GET', pathOf(urls.url(serverUrl, missing)));
    assert.equal(answer.status, 404);
    assert.equal(answer.json.error.code, 'not_found');
    assert.match(answer.json.error.message, new RegExp(missing));
  });

  it('answers 400 for a path that is not a sha256 and for query parameters it does not sign', async () => {
    const signed = new URL(urls.url(serverUrl, v1.sha256));
    const upper = await call('GET', `/api/v1/bundles/${v1.sha256.toUpperCase()}/artifact${signed.search}`);
    assert.equal(upper.status, 400);
    assert.equal(upper.json.error.code, 'bad_request');
    const extra = await call('GET', `${pathOf(signed.href)}&archive=tar.gz`);
    assert.equal(extra.status, 400);
    assert.match(extra.json.error.message, /"archive"/);
    const twice = await call('GET', `${pathOf(signed.href)}&expires=1`);
    assert.equal(twice.status, 400);
    assert.match(twice.json.error.message, /expires appears 2 times/);
  });

  it('leaves the rest of the API as it was: other methods 405, queries on other routes 400, tokens still needed', async () => {
    const post = await call('POST', `/api/v1/bundles/${v1.sha256}/artifact`, { token: owner, json: {} });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    const query = await call('GET', `/api/v1/bundles/${v1.sha256}?expires=1`, { token: owner });
    assert.equal(query.status, 400);
    assert.equal((await call('GET', `/api/v1/bundles/${v1.sha256}`)).status, 401);
    assert.equal((await call('GET', `/api/v1/bundles/${v1.sha256}`, { token: owner })).status, 200);
  });

  it('on a server without a signer (not on Nomad), answers 404 saying why', async () => {
    const signed = new URL(urls.url(serverUrl, v1.sha256));
    const answer = await apiClient(platform.url)('GET', pathOf(signed.href));
    assert.equal(answer.status, 404);
    assert.equal(answer.json.error.code, 'not_found');
    assert.match(answer.json.error.message, /only when it runs workloads on Nomad/);
  });
});
