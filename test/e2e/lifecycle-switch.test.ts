/**
 * The route switch of a redeploy on real containers: requests queued for (or
 * on their way to) the old version follow the URL to the new one, and a
 * workload that stops being served loses its URL.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { testConfig } from '../helpers/config.js';
import { answer, deployRequest, fixture, lifecycleManifests } from './lifecycle-helpers.js';

describe('deployment lifecycle: the route switch (real containers)', function () {
  this.timeout(120_000);
  let platform: Platform | undefined;
  afterEach(async () => platform?.close());

  it('no request fails while 8 concurrent clients (queueing at concurrency 1) call the URL during a redeploy', async () => {
    const { v1, v2 } = await lifecycleManifests();
    platform = await startPlatform({ config: testConfig() });
    const before = await platform.deployments.deploy(deployRequest(v1));
    const target = before.workloads.find((w) => w.name === 'hello')!.url!;
    let deployed = false;
    const seen: Array<{ status: number; version?: number; code?: string }> = [];
    const client = async () => {
      while (!deployed) seen.push(await answer(target));
    };
    const load = Promise.all(Array.from({ length: 8 }, client));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await platform.deployments.deploy(deployRequest(v2));
    await new Promise((resolve) => setTimeout(resolve, 300));
    deployed = true;
    await load;
    assert.deepEqual(
      seen.filter((a) => a.status !== 200),
      [],
      'no request failed during the switch',
    );
    assert.equal(seen.at(-1)!.version, 2);
  });

  it('a redeploy that makes a served workload a function removes its URL (404), not a route to its stopped unit', async () => {
    const { v1 } = await lifecycleManifests();
    const later = await loadManifest({ target: path.join(fixture('function'), 'app.py') });
    platform = await startPlatform({ config: testConfig() });
    const before = await platform.deployments.deploy(deployRequest(v1));
    const target = before.workloads.find((w) => w.name === 'hello')!.url!;
    const after = await platform.deployments.deploy(deployRequest(later));
    assert.equal(after.workloads.find((w) => w.name === 'hello')?.kind, 'function');
    assert.equal((await answer(target, platform.ownerToken.secret)).status, 404);
    assert.equal((await answer(after.workloads.find((w) => w.name === 'other')!.url!)).version, 3);
  });
});
