import assert from 'node:assert/strict';
import type { LoadedManifest } from '../../core/infra/manifest-loader/load.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { tokenFor } from '../core/http/api/platform.js';
import { testConfig } from '../helpers/config.js';
import { bundleOf, upload, type FixtureBundle } from './api-lifecycle-helpers.js';
import { answer, lifecycleManifests } from './lifecycle-helpers.js';

/**
 * The deploy lifecycle over real HTTP, as the CLI will drive it: upload a
 * bundle, deploy the lifecycle app (test/fixtures/lifecycle) from its
 * manifest, and move it through its states with real containers behind its URLs.
 * The tests run in order: each starts from the state the previous one left.
 */
describe('API: deploy lifecycle', function () {
  this.timeout(120_000);
  let platform: Platform;
  let call: Call;
  let owner: string;
  let manifests: { v1: LoadedManifest; v2: LoadedManifest };
  let v1: FixtureBundle;
  let v2: FixtureBundle;
  let urls: Record<string, string>;
  const reports: unknown[] = [];

  const deploy = (body: Record<string, unknown>, app = 'life', token = owner) =>
    call('POST', `/api/v1/apps/${app}/deployments`, { token, json: body });
  const byWorkload = (app: { deployments: { workload: string }[] }) =>
    Object.fromEntries(app.deployments.map((d) => [d.workload, d])) as Record<string, any>;

  before(async () => {
    platform = await startPlatform({ config: testConfig(), report: (error) => reports.push(error) });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    [manifests, v1, v2] = await Promise.all([lifecycleManifests(), bundleOf('v1'), bundleOf('v2')]);
    for (const bundle of [v1, v2]) assert.equal((await upload(platform.url, owner, bundle.bytes, bundle.sha256)).status, 201);
  });
  after(async () => platform?.close());
  afterEach(() => assert.deepEqual(reports, [], 'no unexpected errors'));

  it('deploys the whole app (201) and the URL each deployment names answers', async () => {
    const deployed = await deploy({ manifest: manifests.v1.raw, bundle: v1.sha256 });
    assert.equal(deployed.status, 201, deployed.text);
    assert.equal(deployed.json.name, 'life');
    const workloads = byWorkload(deployed.json);
    assert.deepEqual(Object.keys(workloads).sort(), ['hello', 'other']);
    assert.deepEqual(
      { status: workloads.hello.status, version: workloads.hello.version, name: workloads.hello.name },
      { status: 'running', version: 1, name: 'life/hello' },
    );
    assert.deepEqual(
      workloads.hello.versions.map((v: { version: number; bundleSha256: string }) => [v.version, v.bundleSha256]),
      [[1, v1.sha256]],
    );
    assert.ok(workloads.hello.containers.ready >= 1, JSON.stringify(workloads.hello));
    urls = { hello: workloads.hello.urls.path, other: workloads.other.urls.path };
    assert.deepEqual(await answer(urls.hello!), { status: 200, version: 1, code: undefined });
    assert.deepEqual(await answer(urls.other!), { status: 200, version: 1, code: undefined });
  });

  it('deploys one workload: it gets a new version at the same URL, the others keep theirs', async () => {
    const deployed = await deploy({ manifest: manifests.v2.raw, bundle: v2.sha256, workload: 'hello' });
    assert.equal(deployed.status, 201, deployed.text);
    const workloads = byWorkload(deployed.json);
    assert.equal(workloads.hello.version, 2);
    assert.equal(workloads.hello.urls.path, urls.hello);
    assert.equal(workloads.other.version, 1);
    assert.equal((await answer(urls.hello!)).version, 2);
    assert.equal((await answer(urls.other!)).version, 1);
  });

  it('prune removes the deployments the manifest no longer has: their URL answers 404', async () => {
    const deployed = await deploy({ manifest: manifests.v2.raw, bundle: v2.sha256, prune: true });
    assert.equal(deployed.status, 201, deployed.text);
    assert.deepEqual(Object.keys(byWorkload(deployed.json)), ['hello']);
    assert.equal((await answer(urls.other!, owner)).status, 404);
    assert.equal((await answer(urls.hello!)).version, 2);
  });

  it('lists the app and describes it with its versions', async () => {
    const listed = await call('GET', '/api/v1/apps', { token: owner });
    assert.equal(listed.status, 200);
    assert.equal(listed.json.apps.length, 1);
    assert.deepEqual(
      { ...listed.json.apps[0], createdAt: undefined, updatedAt: undefined },
      { name: 'life', paused: false, workloads: 1, createdAt: undefined, updatedAt: undefined },
    );
    const described = await call('GET', '/api/v1/apps/life', { token: owner });
    assert.equal(described.status, 200);
    assert.deepEqual(
      byWorkload(described.json).hello.versions.map((v: { version: number }) => v.version),
      [1, 2, 3],
    );
  });

  it("answers 404 to another workspace's token on every route, and leaves the app alone", async () => {
    const acme = await tokenFor(platform, 'acme');
    const tries: [string, string, unknown?][] = [
      ['GET', '/api/v1/apps/life'],
      ['POST', '/api/v1/apps/life/pause'],
      ['POST', '/api/v1/apps/life/resume'],
      ['POST', '/api/v1/apps/life/deployments/hello/stop'],
      ['DELETE', '/api/v1/apps/life/deployments/hello'],
      ['DELETE', '/api/v1/apps/life'],
      ['GET', `/api/v1/bundles/${v2.sha256}`],
      ['POST', '/api/v1/apps/life/deployments', { manifest: manifests.v2.raw, bundle: v2.sha256 }],
    ];
    for (const [method, path, json] of tries) {
      const refused = await call(method, path, { token: acme.secret, ...(json === undefined ? {} : { json }) });
      assert.equal(refused.status, 404, `${method} ${path}: ${refused.text}`);
      assert.equal(refused.json.error.code, 'not_found');
    }
    assert.deepEqual((await call('GET', '/api/v1/apps', { token: acme.secret })).json, { apps: [] });
    assert.equal((await answer(urls.hello!)).version, 2);
  });

  it("refuses bad input: names (422), unknown fields (400), another app's manifest (400), an unknown bundle (404), a broken manifest (422), a callback_url that is not http(s) (422)", async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/apps/Life'],
      ['POST', '/api/v1/apps/li_fe/pause'],
      ['POST', '/api/v1/apps/life/deployments/Hello/stop'],
      ['DELETE', '/api/v1/apps/life/deployments/-x'],
    ] as const) {
      const refused = await call(method, path, { token: owner });
      assert.equal(refused.status, 422, `${method} ${path}`);
      assert.equal(refused.json.error.code, 'name_invalid');
    }
    const unknownField = await deploy({ manifest: manifests.v2.raw, bundle: v2.sha256, force: true });
    assert.equal(unknownField.status, 400);
    assert.match(unknownField.json.error.message, /unknown field "force"/);
    const otherApp = await deploy({ manifest: manifests.v2.raw, bundle: v2.sha256 }, 'elsewhere');
    assert.equal(otherApp.status, 400);
    assert.match(otherApp.json.error.message, /"life".*"elsewhere"/);
    const unknownBundle = await deploy({ manifest: manifests.v2.raw, bundle: 'c'.repeat(64) });
    assert.equal(unknownBundle.status, 404);
    assert.match(unknownBundle.json.error.hint, /Upload it first/);
    const broken = await deploy({ manifest: { ...manifests.v2.raw, entry: 7, workloads: 'none' }, bundle: v2.sha256 });
    assert.equal(broken.status, 422);
    assert.equal(broken.json.error.code, 'manifest_invalid');
    assert.deepEqual(broken.json.error.details.issues.map((issue: { path: string }) => issue.path).sort(), ['entry', 'workloads']);
    // A callback URL's form is refused at deploy, naming the option; where it points is checked at each call.
    for (const [url, why] of [
      ['ftp://example.com/hooks', /its scheme is ftp:; svc POSTs callbacks over http: or https: only/],
      ['https://ops:s3cret@example.com/hooks', /holds a user name or password.*X-Svc-Signature/],
    ] as const) {
      const manifest = structuredClone(manifests.v2.raw);
      (manifest.workloads[0]!.options as { callback_url?: string }).callback_url = url;
      const refused = await deploy({ manifest, bundle: v2.sha256 });
      assert.deepEqual([refused.status, refused.json.error.code], [422, 'manifest_invalid'], refused.text);
      const [issue, ...more] = refused.json.error.details.issues;
      assert.deepEqual([issue.path, more], ['workloads[0].options.callback_url', []]);
      assert.match(issue.message, /is not a callback URL svc can use: /);
      assert.match(issue.message, why);
    }
  });

  it('pause: the URL answers 503 app_paused; resume: it answers again', async () => {
    const paused = await call('POST', '/api/v1/apps/life/pause', { token: owner });
    assert.equal(paused.status, 200);
    assert.equal(paused.json.paused, true);
    assert.equal(byWorkload(paused.json).hello.status, 'paused');
    assert.deepEqual(await answer(urls.hello!), { status: 503, version: undefined, code: 'app_paused' });
    assert.equal((await call('GET', '/api/v1/apps', { token: owner })).json.apps[0].paused, true);
    const resumed = await call('POST', '/api/v1/apps/life/resume', { token: owner });
    assert.equal(resumed.status, 200);
    assert.equal(resumed.json.paused, false);
    assert.deepEqual(await answer(urls.hello!), { status: 200, version: 2, code: undefined });
  });

  it('deployment stop: 503 deployment_stopped; deployment delete: 404', async () => {
    const stopped = await call('POST', '/api/v1/apps/life/deployments/hello/stop', { token: owner });
    assert.equal(stopped.status, 200);
    assert.equal(byWorkload(stopped.json).hello.status, 'stopped');
    assert.equal((await answer(urls.hello!)).code, 'deployment_stopped');
    assert.equal((await call('DELETE', '/api/v1/apps/life/deployments/hello', { token: owner })).status, 204);
    assert.equal((await answer(urls.hello!, owner)).status, 404);
    assert.equal((await call('DELETE', '/api/v1/apps/life/deployments/hello', { token: owner })).status, 404);
  });

  it('app delete: 204, then the app is gone from GET /apps and its URLs answer 404', async () => {
    const redeployed = await deploy({ manifest: manifests.v1.raw, bundle: v1.sha256 });
    assert.equal(redeployed.status, 201, redeployed.text);
    assert.equal((await answer(urls.other!)).status, 200);
    assert.equal((await call('DELETE', '/api/v1/apps/life', { token: owner })).status, 204);
    assert.equal((await answer(urls.other!, owner)).status, 404);
    assert.equal((await call('GET', '/api/v1/apps/life', { token: owner })).status, 404);
    assert.deepEqual((await call('GET', '/api/v1/apps', { token: owner })).json, { apps: [] });
    assert.equal((await call('DELETE', '/api/v1/apps/life', { token: owner })).status, 404);
  });
});
