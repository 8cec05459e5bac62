import assert from 'node:assert/strict';
import { containersThatFit, quotaExceeded, quotaFor } from '../../../core/model/quotas.js';

describe('workspace quotas', () => {
  const none = { containers: 0, cpu: 0, memoryMiB: 0 };
  const small = { containers: 1, cpu: 0.25, memoryMiB: 256 };

  it("takes the workspace's own quota, else the one for every other (*), else none", () => {
    const table = { '*': { containers: 2 }, acme: { cpu: 1 } };
    assert.deepEqual(quotaFor(table, 'acme'), { cpu: 1 });
    assert.deepEqual(quotaFor(table, 'other'), { containers: 2 });
    assert.equal(quotaFor({ acme: { cpu: 1 } }, 'other'), null);
    assert.deepEqual(quotaFor(table, 'constructor'), { containers: 2 }, 'a workspace named like an Object member is an other');
  });

  it('counts how many containers fit by the tightest of its limits, never fewer than 0', () => {
    assert.equal(containersThatFit(null, none, small), Number.POSITIVE_INFINITY);
    assert.equal(containersThatFit({ containers: 10, cpu: 1 }, none, small), 4, 'four quarter cores in one');
    assert.equal(containersThatFit({ containers: 10, memoryMiB: 1000 }, { containers: 1, cpu: 0, memoryMiB: 512 }, small), 1);
    assert.equal(containersThatFit({ containers: 2 }, { containers: 3, cpu: 0, memoryMiB: 0 }, small), 0);
    assert.equal(
      containersThatFit({ cpu: 0.3 }, { containers: 0, cpu: 0.05, memoryMiB: 0 }, small),
      1,
      'fractions of cores add up exactly',
    );
  });

  it('names the first quota passed, its limit and what is in use; 429 with Retry-After for traffic', () => {
    assert.equal(quotaExceeded('acme', { containers: 2 }, { containers: 1, cpu: 0, memoryMiB: 0 }, small, false), null);
    const deploy = quotaExceeded('acme', { containers: 4, memoryMiB: 512 }, { containers: 1, cpu: 0.25, memoryMiB: 384 }, small, false)!;
    assert.equal(deploy.code, 'quota_exceeded');
    assert.equal(deploy.status, 403);
    assert.equal(deploy.message, 'the workspace acme may run 512 MiB of memory at once; 384 MiB run and this needs 256 MiB more.');
    assert.deepEqual(deploy.details, { quota: 'memory', limit: 512, inUse: 384, adding: 256 });
    const traffic = quotaExceeded('acme', { cpu: 0.25 }, { containers: 1, cpu: 0.25, memoryMiB: 0 }, small, true)!;
    assert.equal(traffic.status, 429);
    assert.equal(traffic.headers?.['Retry-After'], '5');
  });
});
