import assert from 'node:assert/strict';
import { checkQuota, containersThatFit, quotaExceeded, quotaFor, useOf } from '../../../core/model/quotas.js';

describe('workspace quotas', () => {
  const none = { containers: 0, cpu: 0, memoryMiB: 0, gpus: 0 };
  const small = { containers: 1, cpu: 0.25, memoryMiB: 256, gpus: 0 };

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
    assert.equal(containersThatFit({ containers: 10, memoryMiB: 1000 }, { containers: 1, cpu: 0, memoryMiB: 512, gpus: 0 }, small), 1);
    assert.equal(containersThatFit({ containers: 2 }, { containers: 3, cpu: 0, memoryMiB: 0, gpus: 0 }, small), 0);
    assert.equal(
      containersThatFit({ cpu: 0.3 }, { containers: 0, cpu: 0.05, memoryMiB: 0, gpus: 0 }, small),
      1,
      'fractions of cores add up exactly',
    );
  });

  it('names the first quota passed, its limit and what is in use; 429 with Retry-After for traffic', () => {
    assert.equal(quotaExceeded('acme', { containers: 2 }, { containers: 1, cpu: 0, memoryMiB: 0, gpus: 0 }, small, false), null);
    const deploy = quotaExceeded(
      'acme',
      { containers: 4, memoryMiB: 512 },
      { containers: 1, cpu: 0.25, memoryMiB: 384, gpus: 0 },
      small,
      false,
    )!;
    assert.equal(deploy.code, 'quota_exceeded');
    assert.equal(deploy.status, 403);
    assert.equal(deploy.message, 'the workspace acme may run 512 MiB of memory at once; 384 MiB run and this needs 256 MiB more.');
    assert.deepEqual(deploy.details, { quota: 'memory', limit: 512, inUse: 384, adding: 256 });
    const traffic = quotaExceeded('acme', { cpu: 0.25 }, { containers: 1, cpu: 0.25, memoryMiB: 0, gpus: 0 }, small, true)!;
    assert.equal(traffic.status, 429);
    assert.equal(traffic.headers?.['Retry-After'], '5');
  });

  it('counts GPUs: a container of gpu="L4:2" takes two, one without gpu= none', () => {
    const withTwo = useOf({ cpu: 1, memoryMiB: 1024, gpu: { count: 2 } }, 1);
    assert.deepEqual(withTwo, { containers: 1, cpu: 1, memoryMiB: 1024, gpus: 2 });
    assert.deepEqual(useOf({ cpu: 1, memoryMiB: 1024 }, 3), { containers: 3, cpu: 3, memoryMiB: 3072, gpus: 0 });
    assert.equal(containersThatFit({ gpus: 3 }, none, withTwo), 1);
    assert.equal(containersThatFit({ gpus: 3 }, none, useOf({ cpu: 1, memoryMiB: 1 }, 1)), Number.POSITIVE_INFINITY, 'no GPU, no bound');
    const refused = quotaExceeded('acme', { gpus: 2 }, { ...none, containers: 1, gpus: 2 }, withTwo, false)!;
    assert.equal(refused.message, 'the workspace acme may run 2 of GPUs at once; 2 run and this needs 2 more.');
    assert.deepEqual(checkQuota({ gpus: 1.5 }, 'workspaceQuotas.acme'), {
      problem: 'workspaceQuotas.acme.gpus must be a whole number, 0 or more, got 1.5',
    });
  });
});
