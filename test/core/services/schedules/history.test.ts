import assert from 'node:assert/strict';
import type { SvcError } from '../../../../core/model/errors.js';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';
import { HISTORY_PER_FUNCTION, ScheduleHistory } from '../../../../core/services/schedules/history.js';
import { runKey } from '../../../../core/model/schedule-keys.js';
import type { ScheduledRun } from '../../../../core/services/schedules/types.js';

const runAt = (ms: number): ScheduledRun => ({
  id: ScheduleHistory.runId(new Date(ms)),
  app: 'shop',
  function: 'tick',
  scheduledAt: new Date(ms).toISOString(),
  startedAt: null,
  endedAt: null,
  status: 'skipped',
  durationMs: null,
  error: null,
  logs: [],
});

describe('ScheduleHistory', () => {
  it('claims a tick once (compare-and-set), keeps the last runs newest first, without logs', async () => {
    const history = new ScheduleHistory(createMemoryStateStore());
    const tick = new Date(60_000);
    assert.equal(await history.claim('acme', 'shop', 'tick', tick, 0), true);
    assert.equal(await history.claim('acme', 'shop', 'tick', tick, 0), false, 'a second claim from the same reading loses');
    assert.deepEqual((await history.lastTick('acme', 'shop', 'tick'))?.tick, tick);
    for (let i = 1; i <= HISTORY_PER_FUNCTION + 2; i++) await history.record('acme', runAt(i * 1000));
    const listed = await history.list('acme', 'shop');
    assert.equal(listed.length, HISTORY_PER_FUNCTION);
    assert.equal(listed[0]!.scheduledAt, new Date((HISTORY_PER_FUNCTION + 2) * 1000).toISOString());
    assert.equal('logs' in listed[0]!, false);
    assert.deepEqual(await history.list('other', 'shop'), [], "another workspace's runs are not listed");
  });

  it('says which stored run is corrupt, as state_corrupt, when one is not JSON or not a run', async () => {
    const store = createMemoryStateStore();
    const history = new ScheduleHistory(store);
    const key = runKey('acme', 'shop', 'tick', runAt(1000).id);
    for (const text of ['{not json', '{"id": 1}']) {
      await store.put(key, Buffer.from(text));
      for (const reading of [history.list('acme', 'shop'), history.unfinished('acme', 'shop')]) {
        const error = await reading.then(
          () => assert.fail('expected state_corrupt'),
          (e: unknown) => e as SvcError,
        );
        assert.equal(error.code, 'state_corrupt', error.message);
        assert.ok(error.message.includes(key), error.message);
      }
    }
  });
});
