import assert from 'node:assert/strict';
import { RecentLogs } from '../../../../core/infra/logs/recent-logs.js';
import { RingBuffer } from '../../../../core/infra/logs/ring-buffer.js';
import type { LogLine } from '../../../../core/infra/scheduler/types.js';

const line = (unit: string, text: string): LogLine => ({ unit, container: 'c-1', stream: 'stderr', text, time: new Date(0) });

describe('RingBuffer', () => {
  it('keeps the last items in order, dropping the oldest past its capacity', () => {
    const ring = new RingBuffer<number>(3);
    assert.deepEqual(ring.last(), []);
    for (const n of [1, 2]) ring.push(n);
    assert.deepEqual(ring.last(), [1, 2]);
    for (const n of [3, 4, 5]) ring.push(n);
    assert.deepEqual(ring.last(), [3, 4, 5]);
    assert.deepEqual(ring.last(2), [4, 5]);
    assert.deepEqual(ring.last(10), [3, 4, 5]);
    assert.equal(ring.size, 3);
  });

  it('refuses a capacity that is not a positive integer', () => {
    assert.throws(() => new RingBuffer(0), RangeError);
  });
});

describe('RecentLogs', () => {
  it('keeps the last lines of each unit apart, passes every line on, and forgets a unit', () => {
    const logs = new RecentLogs(2);
    const passed: string[] = [];
    const sink = logs.sink((l) => passed.push(l.text));
    for (const text of ['a1', 'a2', 'a3']) sink(line('a', text));
    sink(line('b', 'b1'));
    assert.deepEqual(
      logs.lines('a').map((l) => l.text),
      ['a2', 'a3'],
    );
    assert.deepEqual(
      logs.lines('b', 5).map((l) => l.text),
      ['b1'],
    );
    assert.deepEqual(passed, ['a1', 'a2', 'a3', 'b1']);
    logs.forget('a');
    assert.deepEqual(logs.lines('a'), []);
  });
});
