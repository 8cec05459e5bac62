/**
 * Every lifecycle transition (docs/api.md) on real containers, through the real gateway,
 * with the records on a real file store: deploy an app, deploy one workload,
 * prune, pause and resume, stop and delete one deployment, delete the app;
 * a redeploy under continuous requests, and a broken redeploy.
 */
import assert from 'node:assert/strict';
import type { Deployment } from '../../core/services/deployments/types.js';
import type { LoadedManifest } from '../../core/infra/manifest-loader/load.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import { DeploymentRecords } from '../../core/services/deployments/records.js';
import { testConfig } from '../helpers/config.js';
import { answer, deployRequest, fixture, lifecycleManifests } from './lifecycle-helpers.js';

const ref = { workspace: DEFAULT_WORKSPACE, app: 'life', stage: 'deployed' as const };

describe('deployment lifecycle (real containers)', function () {
  this.timeout(120_000);
  let platform: Platform;
  let v1: LoadedManifest;
  let v2: LoadedManifest;
  let records: DeploymentRecords;
  const url = (deployment: Deployment, name: string) => deployment.workloads.find((w) => w.name === name)!.url!;
  const gone = async (target: string) => (await answer(target, platform.ownerToken.secret)).status;
  const versionsOf = async (workload: string) =>
    (await records.deployments(DEFAULT_WORKSPACE, 'life')).find((r) => r.workload === workload)?.versions.map((v) => v.version);

  before(async () => {
    ({ v1, v2 } = await lifecycleManifests());
    platform = await startPlatform({ config: testConfig() });
    records = new DeploymentRecords(platform.controlPlane.store);
  });
  after(async () => platform?.close());

  it('deploys an app: every served workload runs, version 1, recorded', async () => {
    const deployment = await platform.deployments.deploy(deployRequest(v1));
    assert.deepEqual(
      deployment.workloads.map((w) => [w.name, w.status, w.version]),
      [
        ['hello', 'running', 1],
        ['other', 'running', 1],
      ],
    );
    assert.deepEqual(await answer(url(deployment, 'hello')), { status: 200, version: 1, code: undefined });
    assert.deepEqual(await versionsOf('hello'), [1]);
    assert.equal((await records.app(DEFAULT_WORKSPACE, 'life'))?.paused, false);
  });

  it('redeploys with zero downtime: continuous requests all get 200 while the route switches to the new version', async () => {
    const before = platform.deployments.get(ref)!;
    const target = url(before, 'hello');
    let deployed = false;
    const seen: Array<{ status: number; version?: number }> = [];
    const load = (async () => {
      while (!deployed) seen.push(await answer(target));
      seen.push(await answer(target));
    })();
    const after = await platform.deployments.deploy(deployRequest(v2));
    deployed = true;
    await load;
    assert.equal(url(after, 'hello'), target, 'the URL is stable across versions');
    assert.ok(seen.length > 1);
    assert.deepEqual(
      seen.filter((a) => a.status !== 200),
      [],
      'no request failed during the switch',
    );
    assert.equal(seen.at(-1)!.version, 2, 'the new version answers after the deploy');
    const oldUnit = before.workloads.find((w) => w.name === 'hello')!.unit!;
    assert.deepEqual(platform.driver.status(oldUnit), [], 'the old version was drained and stopped');
    assert.deepEqual(await versionsOf('hello'), [1, 2]);
    assert.equal(after.workloads.find((w) => w.name === 'other')?.version, 1, 'without prune, a workload the manifest lost keeps running');
    assert.equal((await answer(url(after, 'other'))).status, 200);
  });

  it('a redeploy whose containers fail leaves the old version serving and answers with the error', async () => {
    const serving = platform.deployments.get(ref)!;
    await assert.rejects(
      platform.deployments.deploy(deployRequest(v1, { source: { root: fixture('broken'), entry: 'app' } })),
      (error: { code?: string }) => error.code === 'container_failed',
    );
    assert.deepEqual(await answer(url(serving, 'hello')), { status: 200, version: 2, code: undefined });
    assert.deepEqual(await versionsOf('hello'), [1, 2], 'no version recorded for the failed deploy');
  });

  it('deploys one workload: only that one gets a new version', async () => {
    const deployment = await platform.deployments.deploy(deployRequest(v1, { workload: 'other' }));
    assert.deepEqual(
      deployment.workloads.map((w) => [w.name, w.version]),
      [
        ['hello', 2],
        ['other', 2],
      ],
    );
    assert.deepEqual(await versionsOf('hello'), [1, 2]);
    assert.deepEqual(await versionsOf('other'), [1, 2]);
    assert.equal((await answer(url(deployment, 'hello'))).version, 2);
  });

  it('stops one deployment (503 deployment_stopped, definition kept) and a deploy of it starts it again', async () => {
    let deployment = await platform.deployments.stopWorkload(ref, 'other');
    assert.equal(deployment.workloads.find((w) => w.name === 'other')?.status, 'stopped');
    assert.deepEqual(await answer(url(deployment, 'other')), { status: 503, version: undefined, code: 'deployment_stopped' });
    assert.equal((await records.deployments(DEFAULT_WORKSPACE, 'life')).find((r) => r.workload === 'other')?.status, 'stopped');
    assert.equal((await answer(url(deployment, 'hello'))).status, 200, 'the other workloads keep serving');
    deployment = await platform.deployments.deploy(deployRequest(v1, { workload: 'other' }));
    assert.equal((await answer(url(deployment, 'other'))).status, 200);
  });

  it('pauses the app (every URL 503 app_paused, containers gone, definitions kept) and resumes it', async () => {
    const running = platform.deployments.get(ref)!;
    const paused = await platform.deployments.pause(ref);
    assert.equal(paused.paused, true);
    assert.deepEqual(paused.units, []);
    for (const unit of running.units) assert.deepEqual(platform.driver.status(unit), []);
    for (const name of ['hello', 'other']) assert.equal((await answer(url(paused, name))).code, 'app_paused');
    assert.equal((await records.app(DEFAULT_WORKSPACE, 'life'))?.paused, true);
    const resumed = await platform.deployments.resume(ref);
    assert.deepEqual(
      resumed.workloads.map((w) => [w.name, w.status]),
      [
        ['hello', 'running'],
        ['other', 'running'],
      ],
    );
    assert.equal((await answer(url(resumed, 'hello'))).version, 2, 'it comes back at its current version');
  });

  it('a deploy of a paused app brings every workload back', async () => {
    await platform.deployments.pause(ref);
    const deployment = await platform.deployments.deploy(deployRequest(v2, { workload: 'hello' }));
    assert.equal(deployment.paused, false);
    assert.equal((await answer(url(deployment, 'other'))).status, 200, 'a workload the deploy did not touch runs again');
  });

  it('deploys with prune: the workload no longer in the code is removed (404, record gone)', async () => {
    const before = platform.deployments.get(ref)!;
    const deployment = await platform.deployments.deploy(deployRequest(v2, { prune: true }));
    assert.deepEqual(
      deployment.workloads.map((w) => w.name),
      ['hello'],
    );
    assert.equal(await gone(url(before, 'other')), 404);
    assert.equal(await versionsOf('other'), undefined);
  });

  it('deletes one deployment: its URL answers 404 and its record is gone', async () => {
    await platform.deployments.deploy(deployRequest(v1, { workload: 'other' }));
    const before = platform.deployments.get(ref)!;
    const deployment = await platform.deployments.deleteWorkload(ref, 'other');
    assert.deepEqual(
      deployment.workloads.map((w) => w.name),
      ['hello'],
    );
    assert.equal(await gone(url(before, 'other')), 404);
    assert.equal(await versionsOf('other'), undefined);
  });

  it('deletes the app: every URL answers 404, records and containers gone', async () => {
    const before = platform.deployments.get(ref)!;
    await platform.deployments.remove(ref);
    assert.equal(await gone(url(before, 'hello')), 404);
    assert.equal(await records.app(DEFAULT_WORKSPACE, 'life'), null);
    assert.deepEqual(await records.deployments(DEFAULT_WORKSPACE, 'life'), []);
    for (const unit of before.units) assert.deepEqual(platform.driver.status(unit), []);
    assert.equal(platform.deployments.get(ref), null);
    await assert.rejects(platform.deployments.pause(ref), (error: { code?: string }) => error.code === 'not_found');
  });
});
