import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { eachAtOnce } from '../../cli/transfer/each-at-once.js';

describe('eachAtOnce (the files of a folder put or fetched)', () => {
  it('works on every item, never more than the limit at once', async () => {
    let running = 0;
    let most = 0;
    const done: number[] = [];
    await eachAtOnce([1, 2, 3, 4, 5, 6, 7, 8, 9], 4, async (item) => {
      running += 1;
      most = Math.max(most, running);
      await sleep(item % 3);
      done.push(item);
      running -= 1;
    });
    assert.deepEqual(
      [...done].sort((a, b) => a - b),
      [1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    assert.equal(most, 4);
  });

  it('starts nothing after the first failure, and throws it once those running ended', async () => {
    const started: number[] = [];
    let ended = 0;
    const failing = eachAtOnce([1, 2, 3, 4, 5, 6], 2, async (item) => {
      started.push(item);
      await sleep(item === 1 ? 1 : 20);
      ended += 1;
      if (item === 1) throw new Error('item 1 failed');
    });
    await assert.rejects(failing, /item 1 failed/);
    assert.deepEqual(started, [1, 2]);
    assert.equal(ended, 2, 'the one running when it failed ended first');
  });
});
