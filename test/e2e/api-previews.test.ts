import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LoadedManifest } from '../../core/infra/manifest-loader/load.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { tokenFor } from '../core/http/api/platform.js';
import { testConfig } from '../helpers/config.js';
import { bundleOf, upload, type FixtureBundle } from './api-lifecycle-helpers.js';
import { openStream } from './event-stream.js';
import { answer, lifecycleManifests } from './lifecycle-helpers.js';

/**
 * Previews through the API, as `svc serve` against a server drives them:
 * put a preview (its URLs are the preview ones, apart from the deployed
 * app's), put the next version (live reload, same URLs), follow its logs,
 * end it, and let an unused one end by itself. Real containers throughout.
 */
describe('API: previews', function () {
  this.timeout(180_000);
  let platform: Platform;
  let call: Call;
  let owner: string;
  let manifests: { v1: LoadedManifest; v2: LoadedManifest };
  let v1: FixtureBundle;
  let v2: FixtureBundle;
  const reports: unknown[] = [];

  const put = (manifest: LoadedManifest, bundle: FixtureBundle, extra: Record<string, unknown> = {}, token = owner) =>
    call('PUT', '/api/v1/apps/life/preview', { token, json: { manifest: manifest.raw, bundle: bundle.sha256, ...extra } });
  const urlOf = (view: { deployments: { workload: string; urls: { path: string } }[] }, workload: string) =>
    view.deployments.find((d) => d.workload === workload)!.urls.path;

  before(async () => {
    platform = await startPlatform({ config: testConfig(), report: (error) => reports.push(error) });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    [manifests, v1, v2] = await Promise.all([lifecycleManifests(), bundleOf('v1'), bundleOf('v2')]);
    for (const bundle of [v1, v2]) assert.equal((await upload(platform.url, owner, bundle.bytes, bundle.sha256)).status, 201);
  });
  after(async () => platform?.close());
  afterEach(() => assert.deepEqual(reports, [], 'no unexpected errors'));

  it('puts a preview at preview URLs, apart from the deployed app, and replaces its code in place', async () => {
    const deployed = await call('POST', '/api/v1/apps/life/deployments', {
      token: owner,
      json: { manifest: manifests.v1.raw, bundle: v1.sha256 },
    });
    assert.equal(deployed.status, 201, deployed.text);

    const first = await put(manifests.v1, v1);
    assert.equal(first.status, 200, first.text);
    const url = urlOf(first.json, 'hello');
    assert.match(url, /\/life--preview\/hello\/?$/);
    assert.notEqual(url, urlOf(deployed.json, 'hello'));
    assert.deepEqual({ idle: first.json.idleTimeoutSeconds, version: first.json.deployments[0].version }, { idle: 300, version: 1 });
    assert.ok(Date.parse(first.json.expiresAt) > Date.now());
    assert.equal((await answer(url)).version, 1);

    const second = await put(manifests.v2, v2);
    assert.equal(second.status, 200, second.text);
    assert.equal(urlOf(second.json, 'hello'), url, 'the URL stays');
    assert.equal((await answer(url)).version, 2);
    // v2 no longer has `other`: it left the preview with the code, and the deployed app still has it.
    assert.deepEqual(
      second.json.deployments.map((d: { workload: string }) => d.workload),
      ['hello'],
    );
    assert.equal((await answer(urlOf(deployed.json, 'other'))).version, 1);
    assert.equal((await call('GET', '/api/v1/apps', { token: owner })).json.apps.length, 1, 'a preview is not a deployed app');

    const described = await call('GET', '/api/v1/apps/life/preview', { token: owner });
    assert.equal(described.status, 200);
    assert.equal(urlOf(described.json, 'hello'), url);
  });

  it('follows a preview workload’s logs, and ends the stream, the URLs and the containers when the preview is deleted', async () => {
    const stream = await openStream(`${platform.url}/api/v1/apps/life/preview/deployments/hello/logs`, owner);
    const view = (await call('GET', '/api/v1/apps/life/preview', { token: owner })).json;
    const units = platform.deployments.get({ workspace: 'default', app: 'life', stage: 'preview' })!.units;
    assert.equal((await call('DELETE', '/api/v1/apps/life/preview', { token: owner })).status, 204);
    const end = await stream.next((e) => e.event === 'end');
    assert.equal(JSON.parse(end.data).reason, 'deleted');
    assert.equal((await answer(urlOf(view, 'hello'), owner)).status, 404);
    assert.equal((await call('GET', '/api/v1/apps/life/preview', { token: owner })).status, 404);
    assert.equal((await call('DELETE', '/api/v1/apps/life/preview', { token: owner })).status, 404);
    for (const unit of units) assert.equal(platform.driver.status(unit).length, 0, `${unit} has no container left`);
    // The deployed app is untouched.
    assert.equal((await call('GET', '/api/v1/apps/life', { token: owner })).status, 200);
  });

  it('ends a preview nobody uses after its idle timeout, and keeps one whose logs are followed', async () => {
    assert.equal((await put(manifests.v1, v1, { idleTimeoutSeconds: 1 })).status, 200);
    const stream = await openStream(`${platform.url}/api/v1/apps/life/preview/deployments/hello/logs`, owner);
    // Followed for three timeouts: still there (the listing does not count as use).
    await sleep(3_000);
    const listed = async () =>
      (await call('GET', '/api/v1/deployments', { token: owner })).json.deployments.some((d: { stage: string }) => d.stage === 'preview');
    assert.ok(await listed(), 'a followed preview stays');
    stream.close();
    let gone = false;
    for (let i = 0; i < 100 && !gone; i++) {
      gone = !(await listed());
      if (!gone) await sleep(100);
    }
    assert.ok(gone, 'the preview ended once nobody followed it');
  });

  it('keeps workspaces apart and refuses bad input', async () => {
    assert.equal((await put(manifests.v1, v1)).status, 200);
    const other = (await tokenFor(platform, 'other-team')).secret;
    assert.equal((await call('GET', '/api/v1/apps/life/preview', { token: other })).status, 404);
    assert.equal((await call('DELETE', '/api/v1/apps/life/preview', { token: other })).status, 404);
    assert.equal((await put(manifests.v1, v1, {}, other)).status, 404, 'another workspace cannot use this one’s bundle');

    const wrongApp = await call('PUT', '/api/v1/apps/other/preview', {
      token: owner,
      json: { manifest: manifests.v1.raw, bundle: v1.sha256 },
    });
    assert.deepEqual([wrongApp.status, wrongApp.json.error.code], [400, 'bad_request']);
    assert.equal((await put(manifests.v1, v1, { idleTimeoutSeconds: 100_000 })).json.error.code, 'bad_request');
    assert.equal((await put(manifests.v1, v1, { workload: 'hello' })).json.error.code, 'bad_request');
    assert.equal((await call('GET', '/api/v1/apps/life/preview/deployments/nope/logs', { token: owner })).status, 404);
    assert.equal((await call('GET', '/api/v1/apps/Life/preview', { token: owner })).json.error.code, 'name_invalid');
    assert.equal((await call('POST', '/api/v1/apps/life/preview', { token: owner })).status, 405);
    assert.equal((await call('GET', '/api/v1/apps/life/preview', { token: owner })).status, 200, 'the preview survived');
  });
});
