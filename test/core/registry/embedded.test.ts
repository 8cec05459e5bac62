import assert from 'node:assert/strict';
import { createEmbeddedRegistry } from '../../../core/registry/embedded.js';
import type { Instance } from '../../../core/registry/types.js';

const instance = (id: string, service = 'ws/app/preview/w'): Instance => ({
  id,
  service,
  address: { kind: 'unix', socketPath: `/tmp/${id}.sock` },
  capacity: 1,
  meta: {},
});

describe('createEmbeddedRegistry()', () => {
  it('lists registered instances per service and forgets deregistered ones', async () => {
    const registry = createEmbeddedRegistry();
    await registry.register(instance('a'));
    await registry.register(instance('b'));
    await registry.register(instance('c', 'other'));
    assert.deepEqual(registry.instances('ws/app/preview/w').map((i) => i.id), ['a', 'b']);
    await registry.deregister('a');
    await registry.deregister('unknown');
    assert.deepEqual(registry.instances('ws/app/preview/w').map((i) => i.id), ['b']);
    assert.deepEqual(registry.instances('nothing'), []);
  });

  it('pushes the full current list of a service to watchers on every change', async () => {
    const registry = createEmbeddedRegistry();
    const seen: string[] = [];
    const unwatch = registry.watch((service, instances) => seen.push(`${service}:${instances.map((i) => i.id).join(',')}`));
    await registry.register(instance('a'));
    await registry.register(instance('b'));
    await registry.deregister('a');
    unwatch();
    await registry.deregister('b');
    assert.deepEqual(seen, ['ws/app/preview/w:a', 'ws/app/preview/w:a,b', 'ws/app/preview/w:b']);
  });

  it('moves an instance re-registered under another service, telling both services', async () => {
    const registry = createEmbeddedRegistry();
    const seen: string[] = [];
    registry.watch((service, instances) => seen.push(`${service}:${instances.length}`));
    await registry.register(instance('a', 's1'));
    await registry.register(instance('a', 's2'));
    assert.deepEqual(registry.instances('s1'), []);
    assert.equal(registry.instances('s2').length, 1);
    assert.deepEqual(seen, ['s1:1', 's1:0', 's2:1']);
  });

  it('hands out frozen snapshots that later changes do not alter', async () => {
    const registry = createEmbeddedRegistry();
    await registry.register(instance('a'));
    const before = registry.instances('ws/app/preview/w');
    await registry.register(instance('b'));
    assert.equal(before.length, 1);
    assert.ok(Object.isFrozen(before));
  });
});
