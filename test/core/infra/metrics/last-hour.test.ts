import assert from 'node:assert/strict';
import { BUCKET_MS, BUCKETS, hourKey, LastHour } from '../../../../core/infra/metrics/last-hour.js';

/** The start of some minute, so that tests say where in it they are. */
const T0 = 29_000_000 * BUCKET_MS;
const KEY = hourKey({ workspace: 'default', app: 'board', stage: 'deployed' }, 'say');

describe('the last hour (per-minute series of each workload)', () => {
  it('counts answers by status class in the bucket of their minute, and knows nothing of the minutes before the workload', () => {
    const hour = new LastHour(T0 + 10_000);
    const say = hour.workload(KEY);
    for (const status of [200, 201, 204, 404, 499, 503, 500]) say.answered(status, 0.01);
    hour.advance(T0 + BUCKET_MS + 5_000);
    say.answered(301, 0.01);
    say.answered(101, 0.01);
    const read = hour.read(KEY, T0 + BUCKET_MS + 30_000)!;
    assert.equal(read.minutesAgo.length, BUCKETS);
    assert.deepEqual([read.minutesAgo[0], read.minutesAgo.at(-1)], [59, 0]);
    const last = (values: readonly (number | null)[], back = 0) => values[values.length - 1 - back];
    assert.deepEqual(
      (['2xx', '3xx', '4xx', '5xx'] as const).map((status) => [last(read.requests[status]), last(read.requests[status], 1)]),
      [
        [1, 3],
        [1, 0],
        [0, 2],
        [0, 2],
      ],
      'now: a 301 and a 101 (as 2xx); the minute before: 3 × 2xx, a 404 and a 499, two 5xx',
    );
    assert.equal(last(read.requests['2xx'], 2), null, 'before the workload was first seen: no data, not 0');
    assert.equal(last(read.seconds), 30, 'the current minute covers the 30 s gone by');
    assert.equal(last(read.seconds, 1), 60);
  });

  it('gives p50 and p99 of each minute within 10% of the exact ones, from 82 bins, not the samples', () => {
    const hour = new LastHour(T0);
    const say = hour.workload(KEY);
    // 2000 latencies spread log-uniformly from 0.3 ms to 3 s, in a scrambled order.
    const latencies = Array.from({ length: 2000 }, (_, i) => 0.0003 * 10_000 ** (((i * 7919) % 2000) / 1999));
    for (const seconds of latencies) say.answered(200, seconds);
    const sorted = [...latencies].sort((a, b) => a - b);
    const exact = (q: number) => sorted[Math.ceil(q * sorted.length) - 1]!;
    const read = hour.read(KEY, T0 + 1_000)!;
    for (const [name, q] of [
      ['p50', 0.5],
      ['p99', 0.99],
    ] as const) {
      const estimate = read[name].at(-1)!;
      assert.ok(Math.abs(estimate / exact(q) - 1) <= 0.1, `${name}: ${estimate} against ${exact(q)}`);
    }
    assert.equal(read.p50.at(-2), null, 'a minute without requests has no latency');
  });

  it('keeps 60 minutes: a bucket leaves when its minute is an hour old, and a jump past the hour empties every one', () => {
    const hour = new LastHour(T0);
    const say = hour.workload(KEY);
    say.answered(200, 0.01);
    say.coldStart();
    hour.advance(T0 + 59 * BUCKET_MS);
    let read = hour.read(KEY, T0 + 59 * BUCKET_MS)!;
    assert.deepEqual([read.requests['2xx'][0], read.coldStarts[0]], [1, 1], '59 minutes on, the first minute is the oldest bucket');
    hour.advance(T0 + 60 * BUCKET_MS);
    read = hour.read(KEY, T0 + 60 * BUCKET_MS)!;
    assert.equal(
      read.requests['2xx'].reduce((sum, n) => sum! + (n ?? 0), 0),
      0,
      'an hour on, it is gone',
    );
    say.answered(500, 0.01);
    hour.advance(T0 + 300 * BUCKET_MS);
    read = hour.read(KEY, T0 + 300 * BUCKET_MS)!;
    assert.ok(
      read.requests['5xx'].every((n) => n === 0),
      'hours later, every bucket is of the last hour, and empty',
    );
    assert.equal(hour.read(KEY, T0)!.minutesAgo.length, BUCKETS, 'the clock never goes back');
  });

  it('records the most containers and queued requests sampled in a minute, the units of one workload added up', () => {
    const hour = new LastHour(T0);
    hour.sample([
      { key: KEY, running: 1, starting: 1, queued: 0 },
      { key: KEY, running: 1, starting: 0, queued: 3 },
    ]);
    hour.sample([{ key: KEY, running: 1, starting: 0, queued: 1 }]);
    hour.advance(T0 + BUCKET_MS);
    hour.sample([{ key: KEY, running: 3, starting: 0, queued: 0 }]);
    const read = hour.read(KEY, T0 + BUCKET_MS)!;
    assert.deepEqual([read.running.at(-2), read.starting.at(-2), read.queued.at(-2)], [2, 1, 3]);
    assert.deepEqual([read.running.at(-1), read.starting.at(-1), read.queued.at(-1)], [3, 0, 0]);
    assert.equal(read.running.at(-3), null, 'not sampled: no data');
  });

  it('forgets a workload no unit serves any more, and holds a fixed amount for each one it keeps', () => {
    const hour = new LastHour(T0);
    const other = hourKey({ workspace: 'default', app: 'board', stage: 'deployed' }, 'other');
    hour.workload(KEY).answered(200, 0.01);
    hour.sample([
      { key: KEY, running: 1, starting: 0, queued: 0 },
      { key: other, running: 1, starting: 0, queued: 0 },
    ]);
    assert.equal(hour.size, 2);
    hour.sample([{ key: other, running: 1, starting: 0, queued: 0 }]);
    assert.equal(hour.read(KEY, T0), null, 'deleted: forgotten');
    assert.equal(hour.size, 1);
    for (let minute = 1; minute <= 180; minute++) hour.advance(T0 + minute * BUCKET_MS);
    assert.equal(hour.size, 1, 'hours passing add nothing');
    assert.equal(hour.read(other, T0 + 180 * BUCKET_MS)!.running.length, BUCKETS);
  });
});
