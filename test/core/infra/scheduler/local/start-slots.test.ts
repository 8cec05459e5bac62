import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { StartSlots } from '../../../../../core/infra/scheduler/local/start-slots.js';

describe('StartSlots', () => {
  it('lets `size` containers start at once; the next waits, first come first served, until one is given back', async () => {
    const slots = new StartSlots(2, 60_000);
    const never = new AbortController().signal;
    const first = await slots.take(never);
    const second = await slots.take(never);
    assert.ok(first && second);
    assert.equal(slots.taken, 2);
    assert.equal(slots.full, true);
    const order: string[] = [];
    const third = slots.take(never).then((release) => (order.push('third'), release));
    const fourth = slots.take(never).then((release) => (order.push('fourth'), release));
    await sleep(20);
    assert.deepEqual(order, [], 'nobody got a third slot');
    first();
    first(); // a second release gives back nothing more
    const thirdRelease = await third;
    await sleep(20);
    assert.deepEqual(order, ['third']);
    assert.equal(slots.taken, 2);
    second();
    (await fourth)!();
    thirdRelease!();
    assert.equal(slots.taken, 0);
    assert.equal(slots.full, false);
  });

  it('gives a slot back by itself after holdMs, so a slow start holds up the others only that long', async () => {
    const slots = new StartSlots(1, 50);
    const never = new AbortController().signal;
    const slow = await slots.take(never);
    const started = Date.now();
    const next = await slots.take(never);
    const waited = Date.now() - started;
    assert.ok(waited >= 40 && waited < 2_000, `waited ${waited} ms`);
    slow!(); // late: the slot is already the next one's
    assert.equal(slots.taken, 1);
    next!();
    assert.equal(slots.taken, 0);
  });

  it('a stop while waiting leaves the queue, takes no slot and resolves undefined', async () => {
    const slots = new StartSlots(1, 60_000);
    const held = await slots.take(new AbortController().signal);
    const stopped = new AbortController();
    const waiting = slots.take(stopped.signal);
    const after = slots.take(new AbortController().signal);
    stopped.abort();
    assert.equal(await waiting, undefined);
    held!();
    const release = await after;
    assert.ok(release, 'the container behind the stopped one got the slot');
    assert.equal(slots.taken, 1);
    release();
    const aborted = new AbortController();
    aborted.abort();
    assert.equal(await slots.take(aborted.signal), undefined, 'an already stopped container never takes one');
    assert.equal(slots.taken, 0);
  });
});
