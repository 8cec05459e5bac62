import assert from 'node:assert/strict';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';
import { putJson } from '../../../../core/model/store/json.js';
import { hourOf, UsageMeter, usageKey } from '../../../../core/services/usage/usage-meter.js';

describe('UsageMeter: how long the hours are kept', () => {
  it("deletes every workspace's hours older than the retention, once an hour, and keeps the rest", async () => {
    const store = createMemoryStateStore();
    const now = Date.parse('2026-11-30T12:30:00Z');
    const hours = [
      ['acme', '2026-08-01T00'], // 121 days before: gone
      ['acme', '2026-09-01T11'], // 90 days and an hour before: gone
      ['acme', '2026-09-01T12'], // 90 days before, to the hour: kept
      ['beta', '2026-11-30T11'],
    ] as const;
    for (const [workspace, hour] of hours) await putJson(store, usageKey(workspace, hour), { 'app/fn': { cpuSeconds: 1 } });
    let clock = now;
    const meter = new UsageMeter({
      store,
      driver: { usage: () => new Map() },
      units: () => [],
      retentionDays: 90,
      clock: () => clock,
      report: (error) => assert.fail(String(error)),
    });
    await meter.sample();
    assert.deepEqual(await store.keys('usage/'), [usageKey('acme', '2026-09-01T12'), usageKey('beta', '2026-11-30T11')]);
    // Within the same hour nothing is listed again; the next hour prunes what has aged meanwhile.
    clock = now + 3_600_000;
    assert.equal(hourOf(clock), '2026-11-30T13');
    await meter.sample();
    assert.deepEqual(await store.keys('usage/'), [usageKey('beta', '2026-11-30T11')]);
  });
});
