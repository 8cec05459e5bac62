import assert from 'node:assert/strict';
import { CallLogTail, MAX_LOG_BYTES } from '../../../../core/services/calls/call-log-tail.js';
import type { CallLogs } from '../../../../core/services/calls/types.js';

const unexpected = (error: unknown) => assert.fail(`a write failed: ${String(error)}`);

describe('CallLogTail: what a call printed, bounded', () => {
  it('appends to what earlier attempts printed, and writes only when lines came', async () => {
    const written: CallLogs[] = [];
    const earlier: CallLogs = { lines: [{ attempt: 1, stream: 'stdout', line: 'first try' }], dropped: 0 };
    const tail = new CallLogTail(earlier, 2, async (logs) => void written.push(logs), unexpected);
    await tail.flush();
    assert.deepEqual(written, [], 'nothing new: nothing written');
    tail.add('stderr', 'second try');
    await tail.flush();
    assert.deepEqual(written, [
      {
        lines: [
          { attempt: 1, stream: 'stdout', line: 'first try' },
          { attempt: 2, stream: 'stderr', line: 'second try' },
        ],
        dropped: 0,
      },
    ]);
  });

  it('keeps the last MAX_LOG_BYTES of lines, counting those it drops, and cuts a very long line', async () => {
    let last: CallLogs | undefined;
    const tail = new CallLogTail(null, 1, async (logs) => void (last = logs), unexpected);
    const line = 'x'.repeat(1000);
    const count = Math.ceil(MAX_LOG_BYTES / 1000) + 50;
    for (let i = 0; i < count; i++) tail.add('stdout', `${i} ${line}`);
    tail.add('stdout', 'y'.repeat(20_000));
    await tail.flush();
    const kept = last!.lines.reduce((sum, entry) => sum + Buffer.byteLength(entry.line), 0);
    assert.ok(kept <= MAX_LOG_BYTES, `${kept} bytes kept`);
    assert.equal(last!.dropped + last!.lines.length, count + 1, 'every line is kept or counted');
    assert.ok(last!.dropped > 50);
    assert.match(last!.lines.at(-1)!.line, /^y{16384}… \(3616 more characters\)$/);
    assert.match(last!.lines.at(-2)!.line, new RegExp(`^${count - 1} x`));
  });

  it('writes its copies in order: a slow earlier write never replaces a later one', async () => {
    const order: number[] = [];
    let release: () => void = () => {};
    const slow = new Promise<void>((resolve) => (release = resolve));
    const tail = new CallLogTail(
      null,
      1,
      async (logs) => {
        if (logs.lines.length === 1) await slow;
        order.push(logs.lines.length);
      },
      unexpected,
    );
    tail.add('stdout', 'one');
    const first = tail.flush();
    tail.add('stdout', 'two');
    const second = tail.flush();
    release();
    await Promise.all([first, second]);
    assert.deepEqual(order, [1, 2]);
  });
});
