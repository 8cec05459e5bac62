import assert from 'node:assert/strict';
import type { DeploymentUnit, SchedulerDriver } from '../../../../core/infra/scheduler/types.js';
import { detachable } from '../../../../core/traffic/cluster/detachable-driver.js';
import { isSvcError } from '../../../../core/model/errors.js';

/** A driver that records what reaches it. */
function recording(calls: string[]): SchedulerDriver {
  return {
    name: 'recording',
    submit: async (unit) => void calls.push(`submit ${unit.key}`),
    scale: async (key, count) => void calls.push(`scale ${key} ${count}`),
    stop: async (key) => void calls.push(`stop ${key}`),
    remove: async (key) => void calls.push(`remove ${key}`),
    status: () => [],
    close: async () => {},
    plan: async (unit) => (calls.push(`plan ${unit.key}`), { id: unit.key, change: 'none', placements: {} }) as never,
    rescale: async (unit) => void calls.push(`rescale ${unit.key}`),
  };
}

describe('a detachable scheduler driver', () => {
  const unit = { key: 'default/demo/deployed@1/w' } as DeploymentUnit;

  it('passes every call through while attached, the optional plan and rescale included', async () => {
    const calls: string[] = [];
    const driver = detachable(recording(calls));
    await driver.submit(unit);
    await driver.scale(unit.key, 2);
    await driver.plan!(unit);
    await driver.rescale!(unit);
    await driver.stop(unit.key, 'c1');
    assert.deepEqual(calls, [`submit ${unit.key}`, `scale ${unit.key} 2`, `plan ${unit.key}`, `rescale ${unit.key}`, `stop ${unit.key}`]);
  });

  it('refuses what would start or change anything once detached (not_leader), and lets stops go quietly', async () => {
    const calls: string[] = [];
    const driver = detachable(recording(calls));
    driver.detach();
    for (const attempt of [() => driver.submit(unit), () => driver.scale(unit.key, 1), () => driver.rescale!(unit)]) {
      await assert.rejects(attempt(), (error: unknown) => isSvcError(error) && error.code === 'not_leader');
    }
    await driver.stop(unit.key, 'c1');
    await driver.remove(unit.key);
    assert.deepEqual(calls, []);
  });
});
