import assert from 'node:assert/strict';
import { retryDelay } from '../../../../core/services/runs/retries.js';

describe('retryDelay()', () => {
  it('grows by the back-off coefficient from the initial delay, up to the longest pause', () => {
    const retries = { maxRetries: 6, backoffCoefficient: 3, initialDelay: 0.5, maxDelay: 10 };
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((retry) => retryDelay(retries, retry)),
      [0.5, 1.5, 4.5, 10, 10],
    );
  });

  it('keeps a constant pause with a coefficient of 1, and none with an initial delay of 0', () => {
    assert.deepEqual(
      [1, 2, 3].map((retry) => retryDelay({ maxRetries: 3, backoffCoefficient: 1, initialDelay: 2, maxDelay: 60 }, retry)),
      [2, 2, 2],
    );
    assert.equal(retryDelay({ maxRetries: 3, backoffCoefficient: 2, initialDelay: 0, maxDelay: 60 }, 3), 0);
  });
});
