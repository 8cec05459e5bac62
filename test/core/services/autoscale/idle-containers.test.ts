import assert from 'node:assert/strict';
import { idleContainersToStop } from '../../../../core/services/autoscale/idle-containers.js';

describe('idleContainersToStop()', () => {
  const now = 100_000;
  const keepWarmMs = 10_000;

  it('stops the least recently used idle containers first, no more than the excess', () => {
    const containers = [
      { id: 'recent', inFlight: 0, lastActiveAt: now - 11_000 },
      { id: 'oldest', inFlight: 0, lastActiveAt: now - 50_000 },
      { id: 'older', inFlight: 0, lastActiveAt: now - 30_000 },
    ];
    assert.deepEqual(idleContainersToStop(containers, 1, now, keepWarmMs), ['oldest']);
    assert.deepEqual(idleContainersToStop(containers, 2, now, keepWarmMs), ['oldest', 'older']);
    assert.deepEqual(idleContainersToStop(containers, 5, now, keepWarmMs), ['oldest', 'older', 'recent']);
  });

  it('never stops a container with a request in flight, however long ago it was last used', () => {
    const containers = [
      { id: 'busy', inFlight: 1, lastActiveAt: now - 90_000 },
      { id: 'idle', inFlight: 0, lastActiveAt: now - 20_000 },
    ];
    assert.deepEqual(idleContainersToStop(containers, 2, now, keepWarmMs), ['idle']);
  });

  it('keeps containers used within keep_warm', () => {
    const containers = [{ id: 'warm', inFlight: 0, lastActiveAt: now - 9_999 }];
    assert.deepEqual(idleContainersToStop(containers, 1, now, keepWarmMs), []);
    assert.deepEqual(idleContainersToStop(containers, 1, now + 1, keepWarmMs), ['warm'], 'exactly keep_warm idle is enough');
  });

  it('with keep_warm 0 stops any idle container at once, and nothing without an excess', () => {
    const containers = [{ id: 'a', inFlight: 0, lastActiveAt: now }];
    assert.deepEqual(idleContainersToStop(containers, 1, now, 0), ['a']);
    assert.deepEqual(idleContainersToStop(containers, 0, now, 0), []);
  });

  it('breaks ties by id, so the choice is stable', () => {
    const containers = [
      { id: 'c-b', inFlight: 0, lastActiveAt: 0 },
      { id: 'c-a', inFlight: 0, lastActiveAt: 0 },
    ];
    assert.deepEqual(idleContainersToStop(containers, 1, now, keepWarmMs), ['c-a']);
  });
});
