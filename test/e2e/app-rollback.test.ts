import assert from 'node:assert/strict';
import { appHistory, appRollback, appRollover } from '../../cli/commands/app-history.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { until } from '../helpers/until.js';
import { capture, rejectsWith } from '../cli/fixture.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { testConfig } from '../helpers/config.js';
import type { LoadedManifest } from '../helpers/fixture-manifests.js';
import { bundleOf, upload, type FixtureBundle } from './api-lifecycle-helpers.js';
import { lifecycleManifests } from './lifecycle-helpers.js';

/**
 * History and undo on the embedded platform, with real workers: `svc app history` lists each version
 * with what it changed, `svc app rollback` runs v1 again while a load runs throughout (no request
 * fails during the switch), the next deploy is numbered after the newest, `svc app rollover` starts
 * fresh containers of the same version, and what cannot be done says which versions exist.
 */
describe('app history, rollback and rollover (embedded platform)', function () {
  this.timeout(180_000);
  let platform: Platform;
  let call: Call;
  let owner: string;
  let manifests: { v1: LoadedManifest; v2: LoadedManifest };
  let v1: FixtureBundle;
  let v2: FixtureBundle;
  let url = '';
  const env = () => ({ SVC_SERVER: platform.url, SVC_TOKEN: owner });
  const deploy = (manifest: LoadedManifest, bundle: FixtureBundle) =>
    call('POST', '/api/v1/apps/life/deployments', { token: owner, json: { manifest: manifest.raw, bundle: bundle.sha256 } });
  const ref = { workspace: 'default', app: 'life', stage: 'deployed' as const };
  const version = async () => ((await (await fetch(url)).json()) as { version: number }).version;

  before(async () => {
    platform = await startPlatform({ config: testConfig() });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    [manifests, v1, v2] = await Promise.all([lifecycleManifests(), bundleOf('v1'), bundleOf('v2')]);
    for (const bundle of [v1, v2]) assert.equal((await upload(platform.url, owner, bundle.bytes, bundle.sha256)).status, 201);
    const first = await deploy(manifests.v1, v1);
    assert.equal(first.status, 201, first.text);
    url = first.json.deployments.find((d: { workload: string }) => d.workload === 'hello').urls.path;
    assert.equal((await deploy(manifests.v2, v2)).status, 201);
  });
  after(() => platform?.close());

  it('lists every version kept with what it changed, the running one marked', async () => {
    const history = await call('GET', '/api/v1/apps/life/history', { token: owner });
    assert.equal(history.status, 200, history.text);
    const hello = history.json.versions.filter((v: { workload: string }) => v.workload === 'hello');
    assert.deepEqual(
      hello.map((v: { version: number; current: boolean; changes: string[]; bundleSha256: string }) => [
        v.version,
        v.current,
        v.changes,
        v.bundleSha256,
      ]),
      [
        [2, true, ['code'], v2.sha256],
        [1, false, ['new'], v1.sha256],
      ],
    );
    const shown = capture({ env: env() });
    await appHistory(shown.context, 'life');
    assert.match(shown.stdout(), /^ {2}VERSION +WORKLOAD +DEPLOYED +BY +CODE +CHANGED\n\* v2 +hello /);
  });

  it('rolls back to v1 with no failed request while a load runs, then numbers the next deploy after the newest', async () => {
    assert.equal(await version(), 2);
    let loading = true;
    const statuses: number[] = [];
    const load = (async () => {
      while (loading) statuses.push((await fetch(url).catch(() => ({ status: 0 }))).status);
    })();
    // Counted in requests, not time: a busy machine answers fewer per second, the switch must still fall inside the load.
    await until('the load runs', () => statuses.length >= 5, { intervalMs: 10 });
    const rolled = capture({ env: env() });
    await appRollback(rolled.context, 'life', 'v1');
    assert.match(rolled.stderr(), /rolled life back/);
    const atSwitch = statuses.length;
    await until('the load goes on after the switch', () => statuses.length >= atSwitch + 10, { intervalMs: 10 });
    loading = false;
    await load;
    assert.deepEqual([...new Set(statuses)], [200], 'no request failed during the switch');
    assert.equal(await version(), 1);
    const app = await call('GET', '/api/v1/apps/life', { token: owner });
    assert.equal(app.json.deployments.find((d: { workload: string }) => d.workload === 'hello').version, 1);

    const again = await deploy(manifests.v2, v2);
    assert.equal(again.status, 201);
    assert.equal(again.json.deployments.find((d: { workload: string }) => d.workload === 'hello').version, 3);
    assert.equal(await version(), 2);
    // Without a version: each workload's version before the one it runs.
    assert.equal((await call('POST', '/api/v1/apps/life/rollback', { token: owner, json: {} })).status, 200);
    assert.equal(await version(), 2, 'v2 of hello: the version before v3');
  });

  it('rolls over: fresh containers of the same version', async () => {
    const unit = () => platform.deployments.get(ref)?.workloads.find((w) => w.name === 'hello')?.unit;
    const before = unit();
    assert.ok(before);
    const over = capture({ env: env() });
    await appRollover(over.context, 'life');
    assert.match(over.stderr(), /rolled life over/);
    assert.equal(await version(), 2);
    assert.notEqual(unit(), before, 'a new unit of containers serves it');
    assert.deepEqual(platform.registry.instances(before!), [], 'the old one drained and stopped');
    const app = await call('GET', '/api/v1/apps/life', { token: owner });
    assert.equal(app.json.deployments.find((d: { workload: string }) => d.workload === 'hello').version, 2);
  });

  it("the dashboard's History tab lists the versions and rolls back after asking", async () => {
    const { secret, session } = await platform.controlPlane.sessions.create(platform.controlPlane.owner.account.id, 'default');
    const cookie = { Cookie: `svc_session=${secret}` };
    const tab = await fetch(`${platform.url}/dashboard/apps/life/history`, { headers: cookie });
    assert.equal(tab.status, 200);
    const text = await tab.text();
    assert.match(text, /<th scope="row">v2 <span class="badge">running<\/span><\/th>\s*<td>hello<\/td>/);
    assert.match(text, /href="\/dashboard\/apps\/life\/history\/1\/rollback">Roll back to v1/);
    const asked = await fetch(`${platform.url}/dashboard/apps/life/history/1/rollback`, { headers: cookie });
    assert.match(await asked.text(), /Each workload of life that keeps v1 runs it again/);
    assert.equal(await version(), 2, 'asking changes nothing');
    const done = await fetch(`${platform.url}/dashboard/apps/life/history/1/rollback`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...cookie, Origin: platform.url, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: session.csrf }).toString(),
    });
    assert.equal(done.status, 303, await done.clone().text());
    assert.match(done.headers.get('location') ?? '', /\/dashboard\/apps\/life\?done=life%20rolled%20back%20to%20v1/);
    assert.equal(await version(), 1);
    assert.equal((await call('POST', '/api/v1/apps/life/rollback', { token: owner, json: { version: 2 } })).status, 200);
    assert.equal(await version(), 2);
  });

  it('refuses a version that is not kept, naming those kept, and another workspace as an unknown app', async () => {
    const missing = await call('POST', '/api/v1/apps/life/rollback', { token: owner, json: { version: 9 } });
    assert.equal(missing.status, 404, missing.text);
    assert.equal(missing.json.error.message, 'the app life has no version 9; it keeps versions 1, 2, 3.');
    const current = await call('POST', '/api/v1/apps/life/rollback', { token: owner, json: { version: 2 } });
    assert.equal(current.status, 409);
    assert.equal((await call('POST', '/api/v1/apps/life/rollback', { token: owner, json: { version: 'two' } })).status, 400);
    assert.equal((await rejectsWith(appRollback(capture({ env: env() }).context, 'life', 'latest'))).code, 'usage_invalid');
    assert.equal((await call('POST', '/api/v1/workspaces', { token: owner, json: { name: 'acme' } })).status, 201);
    const other = (await call('POST', '/api/v1/workspaces/acme/token', { token: owner, json: {} })).json.secret as string;
    for (const [method, at] of [
      ['GET', '/api/v1/apps/life/history'],
      ['POST', '/api/v1/apps/life/rollback'],
      ['POST', '/api/v1/apps/life/rollover'],
    ] as const) {
      assert.equal((await call(method, at, { token: other, ...(method === 'POST' ? { json: {} } : {}) })).status, 404, `${method} ${at}`);
    }
    assert.equal(await version(), 2, 'nothing changed');
  });
});
