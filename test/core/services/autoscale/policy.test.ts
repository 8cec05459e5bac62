import assert from 'node:assert/strict';
import { decide, resolvePolicy, scalingInput } from '../../../../core/services/autoscale/policy.js';
import { SvcError } from '../../../../core/model/errors.js';
import { createPluginHost } from '../../../../core/infra/plugin/host.js';
import type { ScalingInput, ScalingPolicy } from '../../../../core/infra/plugin/types.js';
import type { DeploymentUnit } from '../../../../core/infra/scheduler/types.js';
import autoscaleQueueDepthPlugin, { queueDepth } from '../../../../plugins/autoscale-queue-depth/index.js';
import { endpoint } from '../../traffic/gateway/harness.js';

function input(
  load: { inFlight: number; queued: number },
  autoscaler = { minContainers: 0, maxContainers: 3, tasksPerContainer: 2 },
): ScalingInput {
  const workload = endpoint({
    scaling: { workers: 1, concurrency: 1, maxPendingTasks: 10, keepWarmSeconds: 60, checkpointEnabled: false, autoscaler },
  });
  const unit = { key: 'default/demo/deployed/w', workload } as DeploymentUnit;
  return scalingInput(unit, load, 1);
}

const registered = (decide: ScalingPolicy) => ({ name: 'test-policy', plugin: 'test:policy', decide });

describe('the queue-depth policy', () => {
  it('wants one container per tasks_per_container requests in flight or queued, within min and max', () => {
    assert.equal(queueDepth(input({ inFlight: 0, queued: 0 })), 0);
    assert.equal(queueDepth(input({ inFlight: 0, queued: 1 })), 1, 'a request waiting at zero wants a container');
    assert.equal(queueDepth(input({ inFlight: 2, queued: 0 })), 1);
    assert.equal(queueDepth(input({ inFlight: 2, queued: 1 })), 2);
    assert.equal(queueDepth(input({ inFlight: 4, queued: 100 })), 3, 'never above max_containers');
    assert.equal(
      queueDepth(input({ inFlight: 0, queued: 0 }, { minContainers: 2, maxContainers: 3, tasksPerContainer: 1 })),
      2,
      'never below min_containers',
    );
  });

  it('is registered by the built-in plugin under its name', () => {
    const host = createPluginHost([autoscaleQueueDepthPlugin()]);
    assert.equal(host.scalingPolicies.get('queue-depth')?.decide, queueDepth);
    assert.equal(host.scalingPolicies.get('queue-depth')?.plugin, 'svc:autoscale-queue-depth');
  });
});

describe('decide()', () => {
  it('clamps any answer to [min_containers, max_containers]', () => {
    assert.deepEqual(
      decide(
        registered(() => 50),
        queueDepth,
        input({ inFlight: 0, queued: 0 }),
      ),
      { desired: 3 },
    );
    assert.deepEqual(
      decide(
        registered(() => 0),
        queueDepth,
        input({ inFlight: 0, queued: 0 }, { minContainers: 1, maxContainers: 2, tasksPerContainer: 1 }),
      ),
      { desired: 1 },
    );
  });

  it('adds buffer_containers idle ones to what the policy wants, at no load too, within max_containers', () => {
    assert.deepEqual(decide(registered(queueDepth), queueDepth, input({ inFlight: 0, queued: 0 }), 1), { desired: 1 }, 'one warm at idle');
    assert.deepEqual(
      decide(registered(queueDepth), queueDepth, input({ inFlight: 2, queued: 1 }), 1),
      { desired: 3 },
      'two busy and one spare',
    );
    assert.deepEqual(decide(registered(queueDepth), queueDepth, input({ inFlight: 4, queued: 2 }), 2), { desired: 3 }, 'never above max');
    const failing = decide(
      registered(() => Number.NaN),
      queueDepth,
      input({ inFlight: 0, queued: 0 }),
      2,
    );
    assert.equal(failing.desired, 2, 'the fallback gets the buffer too');
  });

  it('falls back to queue-depth with a plugin_error naming the policy and plugin when the policy throws or answers nonsense', () => {
    const load = { inFlight: 3, queued: 1 };
    for (const bad of [
      () => {
        throw new Error('boom');
      },
      () => 1.5,
      () => -1,
      () => Number.NaN,
      () => '2' as unknown as number,
    ]) {
      const decision = decide(registered(bad), queueDepth, input(load));
      assert.equal(decision.desired, 2, 'queue-depth decided');
      assert.ok(decision.error instanceof SvcError);
      assert.equal(decision.error.code, 'plugin_error');
      assert.match(
        decision.error.message,
        /^scaling policy "test-policy" of plugin "test:policy" (threw: boom|returned .*, not a non-negative integer)/,
      );
    }
  });
});

describe('resolvePolicy()', () => {
  it('finds the configured policy, or answers config_invalid listing the known ones', () => {
    const host = createPluginHost([
      autoscaleQueueDepthPlugin(),
      { name: 'acme:burst', apiVersion: 1, scalingPolicies: { 'acme-burst': () => 1 } },
    ]);
    assert.equal(resolvePolicy(host.scalingPolicies, 'acme-burst').plugin, 'acme:burst');
    assert.throws(
      () => resolvePolicy(host.scalingPolicies, 'queue-deph'),
      (error: unknown) => {
        assert.ok(error instanceof SvcError);
        assert.equal(error.code, 'config_invalid');
        assert.equal(error.message, 'scalingPolicy "queue-deph" is not a known scaling policy; known: acme-burst, queue-depth.');
        return true;
      },
    );
  });
});

describe('scaling policies at plugin registration', () => {
  const plugin = (name: string, scalingPolicies: unknown) => ({ name, apiVersion: 1, scalingPolicies }) as never;
  const refused = (message: RegExp) => (error: unknown) =>
    error instanceof SvcError && error.code === 'plugin_invalid' && message.test(error.message);

  it('refuses a policy that is not a function', () => {
    assert.throws(
      () => createPluginHost([plugin('acme:p', { burst: 2 })]),
      refused(/^plugin "acme:p" scaling policy "burst" is 2, not a function$/),
    );
  });

  it('refuses a policy name that is not lower-case kebab', () => {
    assert.throws(
      () => createPluginHost([plugin('acme:p', { Burst: () => 1 })]),
      refused(/^plugin "acme:p" names a scaling policy "Burst"$/),
    );
  });

  it('refuses two plugins that provide the same policy name', () => {
    assert.throws(
      () => createPluginHost([autoscaleQueueDepthPlugin(), plugin('acme:p', { 'queue-depth': () => 1 })]),
      refused(/^plugins "svc:autoscale-queue-depth" and "acme:p" both provide the scaling policy "queue-depth"$/),
    );
  });
});
