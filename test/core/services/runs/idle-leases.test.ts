import assert from 'node:assert/strict';
import { IdleLeases } from '../../../../core/services/runs/idle-leases.js';

/** A lease on a fake clock: sweeps are called by hand, so nothing here waits. */
function leases() {
  let now = 1_000_000;
  const expired: string[] = [];
  const busy = new Map<string, boolean>();
  const host = new IdleLeases({ now: () => now, sweepMs: 3_600_000 });
  const hold = (id: string, timeoutMs: number) =>
    host.hold(id, { timeoutMs, busy: () => busy.get(id) ?? false, expire: () => expired.push(id) });
  return { host, hold, expired, busy, advance: (ms: number) => (now += ms), now: () => now };
}

describe('IdleLeases', () => {
  it('ends a lease idle for its timeout, once, and not a moment before', () => {
    const { host, hold, expired, advance } = leases();
    hold('a', 1000);
    advance(999);
    host.sweep();
    assert.deepEqual(expired, []);
    advance(1);
    host.sweep();
    host.sweep();
    assert.deepEqual(expired, ['a']);
    host.close();
  });

  it('starts the idle clock again on touch', () => {
    const { host, hold, expired, advance } = leases();
    hold('a', 1000);
    advance(800);
    host.touch('a');
    advance(800);
    host.sweep();
    assert.deepEqual(expired, []);
    advance(200);
    host.sweep();
    assert.deepEqual(expired, ['a']);
    host.close();
  });

  it('never ends a busy lease, and counts busy time as use', () => {
    const { host, hold, expired, busy, advance, now } = leases();
    hold('a', 1000);
    busy.set('a', true);
    advance(10_000);
    host.sweep();
    assert.deepEqual(expired, []);
    assert.equal(host.expiresAt('a')!.getTime(), now() + 1000, 'a busy lease ends no sooner than a timeout from now');
    busy.set('a', false);
    advance(999);
    host.sweep();
    assert.deepEqual(expired, [], 'the idle clock started at the last sweep that saw it busy');
    advance(1);
    host.sweep();
    assert.deepEqual(expired, ['a']);
    host.close();
  });

  it('release ends a lease without expiring it; leases are independent', () => {
    const { host, hold, expired, advance } = leases();
    hold('a', 1000);
    hold('b', 5000);
    host.release('a');
    assert.equal(host.expiresAt('a'), null);
    advance(1000);
    host.sweep();
    assert.deepEqual(expired, []);
    advance(4000);
    host.sweep();
    assert.deepEqual(expired, ['b']);
    host.close();
  });
});
