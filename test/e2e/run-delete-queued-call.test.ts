import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { callRun, pickledCall, readyRun, startRunPlatform, unpickled, type RunPlatform } from './run-helpers.js';

/**
 * DELETE /api/v1/runs/:id lets calls in flight finish; a call still waiting
 * for a slot (the function's one container busy) gets 404, like any call
 * that runs into the end: never a retryable 503 for a run that is gone.
 */
describe('a call queued for a slot when its run is deleted', function () {
  this.timeout(180_000);
  let runs: RunPlatform;

  before(async () => {
    runs = await startRunPlatform();
  });
  after(async () => runs?.platform.close());

  it('finishes, or gets 404: never a retryable 503 no_capacity', async () => {
    const { platform, call, owner } = runs;
    const id = await readyRun(runs, 'slow');
    const unit = `default/runs/${id}/slow`;
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
