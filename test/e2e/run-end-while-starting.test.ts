import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Platform } from '../../core/platform/platform.js';
import type { Call } from '../core/http/api/client.js';
import type { LoadedManifest } from '../../core/infra/manifest-loader/load.js';
import { startRunPlatform, type RunPlatform } from './run-helpers.js';

/**
 * A run ended (DELETE) while its first container starts: the start stops at
 * its next step and cleans up after itself, so that neither its container nor
 * its log lines (which the starting container keeps printing) outlive it.
 */
describe('a remote run ended while it starts', function () {
  this.timeout(180_000);
  let runs: RunPlatform;
  let platform: Platform;
  let call: Call;
  let owner: string;
  let manifest: LoadedManifest;
  let sha256: string;

  before(async () => {
    runs = await startRunPlatform();
    ({ platform, call, owner, manifest, sha256 } = runs);
  });
  after(async () => runs?.platform.close());

  it('leaves no container and no log lines once its start is over', async () => {
    const created = await call('POST', '/api/v1/runs', {
      token: owner,
      json: { manifest: manifest.raw, bundle: sha256, function: 'square' },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.json.run.id as string;
    const unit = `default/runs/${id}/square`;
    const logKey = { workspace: 'default', app: 'runs', stage: id, workload: 'square' };

    // End it while its first container starts (not yet healthy).
    let status = created.json.run.status as string;
    for (let i = 0; i < 6000 && status !== 'starting'; i++) {
      await sleep(5);
      status = (await call('GET', `/api/v1/runs/${id}`, { token: owner })).json.run.status;
      assert.ok(status === 'building' || status === 'starting', `the run went ${status} before it could be ended while starting`);
    }
    assert.equal(status, 'starting');
    assert.equal((await call('DELETE', `/api/v1/runs/${id}`, { token: owner })).status, 204);
    assert.equal((await call('GET', `/api/v1/runs/${id}`, { token: owner })).status, 404, 'the run is gone at once');

    // The start stops at its next step (its container may still become healthy first), then cleans up.
    const leftOver = () => ({
      containers: platform.driver.status(unit).length,
      lines: platform.deploymentLogs.lines(logKey).map((l) => l.text),
    });
    for (let i = 0; i < 1200; i++) {
      const left = leftOver();
      if (left.containers === 0 && left.lines.length === 0) break;
      await sleep(50);
    }
    assert.deepEqual(leftOver(), { containers: 0, lines: [] }, 'no container and no log lines of the ended run are left');
    // And lines that come later (none should) would not bring it back: the unit is gone from the driver.
    assert.equal(platform.driver.status(unit).length, 0);
  });
});
