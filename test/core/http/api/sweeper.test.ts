import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSweeper } from '../../../../core/http/api/sweeper.js';

describe('startSweeper()', () => {
  it('runs every task each round, reports a failing one and goes on with the rest', async () => {
    const ran: string[] = [];
    const reported: unknown[] = [];
    const failure = new Error('disk full');
    const sweeper = startSweeper(
      [
        async () => {
          throw failure;
        },
        async () => ran.push('second'),
      ],
      1,
      (error) => reported.push(error),
    );
    while (ran.length === 0) await sleep(2);
    await sweeper.stop();
    assert.equal(reported[0], failure);
    assert.equal(ran[0], 'second');
  });

  it('stop() waits for the round in progress, and no round starts after it', async () => {
    let release: () => void = () => {};
    let started = 0;
    let finished = 0;
    const sweeper = startSweeper(
      [
        async () => {
          started++;
          await new Promise<void>((resolve) => (release = resolve));
          finished++;
        },
      ],
      1,
      (error) => assert.fail(String(error)),
    );
    while (started === 0) await sleep(2);
    const stopped = sweeper.stop().then(() => finished);
    release();
    assert.equal(await stopped, 1, 'stop resolved after the round finished');
    await sleep(10);
    assert.equal(started, 1, 'one round at a time, none after stop');
  });
});
