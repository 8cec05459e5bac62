import assert from 'node:assert/strict';
import { backoffMs, CrashTracker } from '../../../../core/services/autoscale/crash-tracker.js';

const policy = { backoffBaseMs: 500, backoffCapMs: 30_000, threshold: 3, stableMs: 10_000 };

describe('backoffMs()', () => {
  it('doubles from the base with each failure, capped', () => {
    assert.deepEqual(
      [0, 1, 2, 3, 4, 6, 7, 8, 100].map((n) => backoffMs(n, policy)),
      [0, 500, 1000, 2000, 4000, 16_000, 30_000, 30_000, 30_000],
    );
  });
});

describe('CrashTracker', () => {
  it('becomes crash-looping at the third failure in a row, and says so once', () => {
    const crash = new CrashTracker(policy);
    assert.equal(crash.failed('exited with code 3', 0), false);
    assert.equal(crash.failed('exited with code 3', 1_000), false);
    assert.equal(crash.crashLooping, false);
    assert.equal(crash.failed('exited with code 3', 3_000), true);
    assert.equal(crash.crashLooping, true);
    assert.equal(crash.failed('exited with code 4', 7_000), false, 'already crash-looping');
    assert.equal(crash.failures, 4);
    assert.deepEqual(crash.lastExit, { reason: 'exited with code 4', at: new Date(7_000) });
  });

  it('waits the back-off of the last failure before the next start', () => {
    const crash = new CrashTracker(policy);
    assert.equal(crash.waitMs(0), 0);
    crash.failed('x', 1_000);
    assert.equal(crash.waitMs(1_000), 500);
    assert.equal(crash.waitMs(1_500), 0);
    crash.failed('x', 2_000);
    assert.equal(crash.waitMs(2_000), 1_000);
    assert.equal(crash.backoffMs, 1_000);
  });

  it('ends the crash loop when a container becomes healthy, and clears the failures once one stays healthy', () => {
    const crash = new CrashTracker(policy);
    for (const at of [0, 1, 2]) crash.failed('x', at);
    crash.healthy();
    assert.equal(crash.crashLooping, false);
    assert.equal(crash.failures, 3, 'not stable yet');
    crash.observeHealthy(9_999);
    assert.equal(crash.failures, 3);
    crash.observeHealthy(10_000);
    assert.equal(crash.failures, 0);
    assert.equal(crash.waitMs(3), 0);
  });

  it('ends the run of failures when a container is stopped for being idle, even within the stable window', () => {
    const crash = new CrashTracker(policy);
    crash.failed('x', 0);
    crash.failed('x', 1);
    crash.healthy();
    crash.stoppedIdle();
    assert.equal(crash.failures, 0);
    assert.equal(crash.failed('x', 2), false, 'one new failure after an idle stop is not a crash loop');
    assert.equal(crash.failures, 1);
  });

  it('counts the exit of a long-lived container as the first failure of a new run', () => {
    const crash = new CrashTracker(policy);
    crash.failed('x', 0);
    crash.failed('x', 1);
    crash.failed('killed', 60_000, 50_000);
    assert.equal(crash.failures, 1);
    assert.equal(crash.crashLooping, false);
  });
});
