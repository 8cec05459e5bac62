import assert from 'node:assert/strict';
import { deploymentList, deploymentScale } from '../../cli/commands/deployment.js';
import { workspaceQuota } from '../../cli/commands/workspace.js';
import { tokenFor } from '../core/http/api/platform.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { DeploymentRecords } from '../../core/services/deployments/records.js';
import { capture, rejectsWith } from '../cli/fixture.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { testConfig } from '../helpers/config.js';
import { until } from '../helpers/until.js';
import { bundleOf, upload, type FixtureBundle } from './api-lifecycle-helpers.js';
import { lifecycleManifests } from './lifecycle-helpers.js';
import type { LoadedManifest } from '../helpers/fixture-manifests.js';

/**
 * Scaling by hand on the embedded platform, with real containers: `svc deployment scale --min 2` starts
 * a second container within seconds, `svc deployment list` shows the bounds as set by hand, the record
 * keeps them (a restart would too), the next deploy brings the code's back, and bad bounds change nothing.
 */
describe('svc deployment scale (embedded platform)', function () {
  this.timeout(120_000);
  let platform: Platform;
  let call: Call;
  let owner: string;
  let manifest: LoadedManifest;
  let v1: FixtureBundle;
  const env = () => ({ SVC_SERVER: platform.url, SVC_TOKEN: owner });
  const ref = { workspace: 'default', app: 'life', stage: 'deployed' as const };
  const hello = () => platform.deployments.get(ref)!.workloads.find((w) => w.name === 'hello')!;
  const ready = () => platform.autoscaler.status(hello().unit!)?.containers.filter((c) => c.state === 'healthy').length ?? 0;
  const deploy = () => call('POST', '/api/v1/apps/life/deployments', { token: owner, json: { manifest: manifest.raw, bundle: v1.sha256 } });

  before(async () => {
    platform = await startPlatform({ config: testConfig() });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    [{ v1: manifest }, v1] = await Promise.all([lifecycleManifests(), bundleOf('v1')]);
    assert.equal((await upload(platform.url, owner, v1.bytes, v1.sha256)).status, 201);
    assert.equal((await deploy()).status, 201);
  });
  after(() => platform?.close());

  it('starts a second container within seconds, shows the bounds as set by hand, and keeps them in the record', async () => {
    assert.deepEqual(hello().scaling, { min: 0, max: 1, buffer: 0, byHand: false });
    const scaled = capture({ env: env() });
    await deploymentScale(scaled.context, 'life/hello', { min: 2, max: 4 });
    assert.match(scaled.stderr(), /scaled life\/hello by hand/);
    await until('a second container is healthy', async () => ready() >= 2, { timeoutMs: 30_000, intervalMs: 100 });
    assert.deepEqual(hello().scaling, { min: 2, max: 4, buffer: 0, byHand: true });
    const listed = capture({ env: env() });
    await deploymentList(listed.context, { app: 'life' });
    assert.match(listed.stdout(), /life\/hello +endpoint +running +2 +2-4 \(by hand\)/);
    const [record] = (await new DeploymentRecords(platform.controlPlane.store).deployments('default', 'life')).filter(
      (r) => r.workload === 'hello',
    );
    assert.deepEqual(record!.scaleOverride, { minContainers: 2, maxContainers: 4, bufferContainers: 0 });
    await deploymentScale(capture({ env: env() }).context, 'life/hello', { buffer: 1 });
    assert.deepEqual(hello().scaling, { min: 2, max: 4, buffer: 1, byHand: true }, 'what is left out keeps its value');
  });

  it('refuses bad bounds and an unknown deployment, changing nothing', async () => {
    const crossed = await call('POST', '/api/v1/apps/life/deployments/hello/scale', { token: owner, json: { min: 5, max: 3 } });
    assert.equal(crossed.status, 400);
    assert.equal(crossed.json.error.message, 'life/hello cannot scale so: --min 5 is above --max 3.');
    assert.equal((await call('POST', '/api/v1/apps/life/deployments/hello/scale', { token: owner, json: { max: 0 } })).status, 400);
    assert.equal((await call('POST', '/api/v1/apps/life/deployments/hello/scale', { token: owner, json: { min: 'two' } })).status, 400);
    assert.equal((await call('POST', '/api/v1/apps/life/deployments/nope/scale', { token: owner, json: { min: 1 } })).status, 404);
    assert.equal((await rejectsWith(deploymentScale(capture({ env: env() }).context, 'life/hello', {}))).code, 'usage_invalid');
    assert.deepEqual(hello().scaling, { min: 2, max: 4, buffer: 1, byHand: true });
  });

  it("brings the code's bounds back with the next deploy", async () => {
    assert.equal((await deploy()).status, 201);
    assert.deepEqual(hello().scaling, { min: 0, max: 1, buffer: 0, byHand: false });
    const [record] = (await new DeploymentRecords(platform.controlPlane.store).deployments('default', 'life')).filter(
      (r) => r.workload === 'hello',
    );
    assert.equal(record!.scaleOverride, undefined);
  });
});

/**
 * The operator's per-workspace quota (`workspaceQuotas`, here two containers for every workspace) with real
 * containers: a deploy and a scale past it are refused with 403 naming the quota and what is in use, a
 * redeploy (which replaces what it counts) is not, and traffic that needs a container past it gets 429.
 */
describe('workspace quotas (embedded platform)', function () {
  this.timeout(120_000);
  let platform: Platform;
  let call: Call;
  let owner: string;
  let manifest: LoadedManifest;
  let v1: FixtureBundle;
  let otherUrl = '';
  const deploy = () => call('POST', '/api/v1/apps/life/deployments', { token: owner, json: { manifest: manifest.raw, bundle: v1.sha256 } });
  const containers = async (): Promise<{ id: string; deployment: string; state: string }[]> =>
    (await call('GET', '/api/v1/containers?app=life', { token: owner })).json.containers;

  before(async () => {
    platform = await startPlatform({ config: testConfig({ workspaceQuotas: { '*': { containers: 2 }, roomy: { containers: 10 } } }) });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    [{ v1: manifest }, v1] = await Promise.all([lifecycleManifests(), bundleOf('v1')]);
    assert.equal((await upload(platform.url, owner, v1.bytes, v1.sha256)).status, 201);
  });
  after(() => platform?.close());

  it('lets a deploy fill the quota and a redeploy replace it, and refuses a scale past it, changing nothing', async () => {
    assert.equal((await deploy()).status, 201, 'two endpoints: one container each');
    const again = await deploy();
    assert.equal(again.status, 201, 'a redeploy replaces the containers it counts');
    otherUrl = again.json.deployments.find((d: { workload: string }) => d.workload === 'other').urls.path;
    const refused = await call('POST', '/api/v1/apps/life/deployments/hello/scale', { token: owner, json: { min: 2, max: 2 } });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.json.error.code, 'quota_exceeded');
    assert.match(refused.json.error.message, /the workspace default may run 2 of containers at once; 1 run and this needs 2 more/);
    assert.deepEqual(refused.json.error.details, { quota: 'containers', limit: 2, inUse: 1, adding: 2 });
    const [hello] = platform.deployments
      .get({ workspace: 'default', app: 'life', stage: 'deployed' })!
      .workloads.filter((w) => w.name === 'hello');
    assert.deepEqual(hello!.scaling, { min: 0, max: 1, buffer: 0, byHand: false }, 'nothing changed');
  });

  it('refuses a deploy of another app past the quota, with nothing started', async () => {
    const other = { ...manifest.raw, app: { ...manifest.raw.app, name: 'more' } };
    const refused = await call('POST', '/api/v1/apps/more/deployments', { token: owner, json: { manifest: other, bundle: v1.sha256 } });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.json.error.code, 'quota_exceeded');
    assert.match(refused.json.error.hint, /workspaceQuotas/);
    assert.equal(platform.deployments.get({ workspace: 'default', app: 'more', stage: 'deployed' }), null);
  });

  it('answers traffic that needs a container past the quota with 429 and Retry-After', async () => {
    // other's container stopped (min 0: nothing replaces it), hello scaled to the whole quota.
    const [other] = (await containers()).filter((c) => c.deployment === 'life/other');
    assert.equal((await call('POST', `/api/v1/containers/${other!.id}/stop`, { token: owner })).status, 200);
    await until('other has no container', async () => !(await containers()).some((c) => c.deployment === 'life/other'), {
      timeoutMs: 20_000,
    });
    assert.equal((await call('POST', '/api/v1/apps/life/deployments/hello/scale', { token: owner, json: { min: 2, max: 2 } })).status, 200);
    await until(
      'hello runs two',
      async () => (await containers()).filter((c) => c.deployment === 'life/hello' && c.state === 'healthy').length === 2,
      {
        timeoutMs: 30_000,
        intervalMs: 100,
      },
    );
    const response = await fetch(otherUrl);
    const body = (await response.json()) as { error: { code: string; message: string } };
    assert.equal(response.status, 429, JSON.stringify(body));
    assert.equal(body.error.code, 'quota_exceeded');
    assert.equal(response.headers.get('retry-after'), '5');
    assert.ok(!(await containers()).some((c) => c.deployment === 'life/other'), 'no container started past the quota');
  });

  it('lets the operator set a quota with a command, which holds at once and until cleared; others may only read it', async () => {
    const env = { SVC_SERVER: platform.url, SVC_TOKEN: owner };
    const shown = capture({ env });
    await workspaceQuota(shown.context, undefined);
    assert.match(shown.stdout(), /^QUOTA +IN USE +LIMIT\ncontainers +2 +2\ncpu +[\d.]+ cores +no bound\nmemory +\d+ MiB +no bound$/m);
    assert.match(shown.stderr(), /default's quota comes from the server config \(workspaceQuotas\)/);

    const set = capture({ env });
    await workspaceQuota(set.context, 'default', { containers: '3', memory: '4096' });
    assert.match(set.stdout(), /containers +2 +3\n/);
    assert.match(set.stderr(), /default's quota was set by the server's operator/);
    // At once: hello may now run two (other runs one) where the config's quota of 2 refused it.
    assert.equal((await call('POST', '/api/v1/apps/life/deployments/hello/scale', { token: owner, json: { min: 0, max: 3 } })).status, 200);
    const member = (await tokenFor(platform, 'default')).secret;
    const refused = await rejectsWith(
      workspaceQuota(capture({ env: { ...env, SVC_TOKEN: member } }).context, 'default', { containers: '50' }),
    );
    assert.equal(refused.code, 'not_operator');
    const bad = await call('PUT', '/api/v1/workspaces/default/quota', { token: owner, json: { containers: -1 } });
    assert.equal(bad.status, 400, bad.text);
    assert.equal((await call('PUT', '/api/v1/workspaces/nope/quota', { token: owner, json: { containers: 1 } })).status, 404);
    const misnamed = await call('PUT', '/api/v1/workspaces/Not_A_Name/quota', { token: owner, json: { containers: 1 } });
    assert.deepEqual([misnamed.status, misnamed.json.error.code], [422, 'name_invalid']);
    assert.equal((await rejectsWith(workspaceQuota(capture({ env }).context, 'default', { cpu: 'lots' }))).code, 'usage_invalid');
    assert.deepEqual(
      (await call('GET', '/api/v1/workspace/quota', { token: member })).json.quota,
      { containers: 3, memoryMiB: 4096 },
      'kept as set',
    );

    await workspaceQuota(capture({ env }).context, 'default', { clear: true });
    const cleared = (await call('GET', '/api/v1/workspace/quota', { token: owner })).json;
    assert.deepEqual([cleared.quota, cleared.source], [{ containers: 2 }, 'config'], "the config's holds again");
  });
});
