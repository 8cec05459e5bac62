import assert from 'node:assert/strict';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadManifest, type LoadedManifest } from '../../core/manifest/load.js';
import { startPlatform, type Platform } from '../../core/platform.js';
import { apiClient, type Call } from '../core/api/client.js';
import { testConfig } from '../helpers/config.js';
import { upload } from './api-lifecycle-helpers.js';
import { bundleOfFolder, callRun, pickledCall, runFixture, unpickled } from './run-helpers.js';

/**
 * DELETE /api/v1/runs/:id lets calls in flight finish; a call still waiting
 * for a slot (the function's one container busy) gets 404, like any call
 * that runs into the end: never a retryable 503 for a run that is gone.
 */
describe('a call queued for a slot when its run is deleted', function () {
  this.timeout(180_000);
  let platform: Platform;
  let call: Call;
  let owner: string;
  let manifest: LoadedManifest;
  let sha256: string;

  before(async () => {
    platform = await startPlatform({ config: testConfig(), report: () => {} });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    manifest = await loadManifest({ target: path.join(runFixture('ok'), 'app.py') });
    const bundle = await bundleOfFolder(runFixture('ok'));
    sha256 = bundle.sha256;
    assert.equal((await upload(platform.url, owner, bundle.bytes, bundle.sha256)).status, 201);
  });
  after(async () => platform?.close());

  it('finishes, or gets 404: never a retryable 503 no_capacity', async () => {
    const created = await call('POST', '/api/v1/runs', { token: owner, json: { manifest: manifest.raw, bundle: sha256, function: 'slow' } });
    assert.equal(created.status, 201, created.text);
    const id = created.json.run.id as string;
    const unit = `default/runs/${id}/slow`;
    for (let status = ''; status !== 'ready'; await sleep(50)) {
      status = (await call('GET', `/api/v1/runs/${id}`, { token: owner })).json.run.status;
      assert.notEqual(status, 'failed');
    }
    const running = callRun(platform.url, owner, id, pickledCall([3]));
    for (let i = 0; i < 200 && (platform.autoscaler.status(unit)?.inFlight ?? 0) < 1; i++) await sleep(25);
    const queued = callRun(platform.url, owner, id, pickledCall([0]));
    for (let i = 0; i < 200 && (platform.autoscaler.status(unit)?.queued ?? 0) < 1; i++) await sleep(25);
    assert.equal(platform.autoscaler.status(unit)?.queued, 1, 'the second call waits for the only slot');
    const view = (await call('GET', `/api/v1/runs/${id}`, { token: owner })).json.run;
    assert.equal(view.calls.inFlight, 2, 'the API counts the queued call as in flight');

    assert.equal((await call('DELETE', `/api/v1/runs/${id}`, { token: owner })).status, 204);
    assert.equal(unpickled((await running).frames.at(-1)!.pickle!), 'done', 'the running call finishes');
    const answer = await queued;
    const got = answer.frames.length > 0 ? `200 ${answer.frames.at(-1)!.type}` : `${answer.status} ${answer.json.error.code}`;
    assert.ok(got === '200 result' || got === '404 not_found', `the queued call got ${got}: ${JSON.stringify(answer.json)}`);
  });
});
