/**
 * The ServiceRegistry conformance suite: what every registry (embedded,
 * Consul) must show. `make` returns a fresh, empty registry and a way to
 * build instances it can hold (a Unix socket for the embedded registry, a
 * TCP address for Consul); the suite closes the registry (and calls
 * `cleanup`) after each test.
 */
import assert from 'node:assert/strict';
import type { Instance, ServiceRegistry } from '../../../../core/infra/registry/types.js';

export interface RegistryFixture {
  readonly registry: ServiceRegistry;
  instance(id: string, service?: string, port?: number): Instance;
  cleanup?(): Promise<void>;
}

export const SERVICE = 'ws/app/preview/w';

export function describeRegistryConformance(name: string, make: () => Promise<RegistryFixture>): void {
  describe(`ServiceRegistry conformance: ${name}`, () => {
    let fixture: RegistryFixture;
    let registry: ServiceRegistry;
    let instance: RegistryFixture['instance'];
    beforeEach(async () => {
      fixture = await make();
      registry = fixture.registry;
      instance = (id, service = SERVICE, port) => fixture.instance(id, service, port);
    });
    afterEach(async () => {
      await registry.close();
      await fixture.cleanup?.();
    });

    it('lists registered instances per service and forgets deregistered ones', async () => {
      await registry.register(instance('a'));
      await registry.register(instance('b'));
      await registry.register(instance('c', 'ws/other/preview/w'));
      assert.deepEqual(
        registry.instances(SERVICE).map((i) => i.id),
        ['a', 'b'],
      );
      assert.deepEqual(
        registry.instances('ws/other/preview/w').map((i) => i.id),
        ['c'],
      );
      await registry.deregister('a');
      await registry.deregister('unknown');
      assert.deepEqual(
        registry.instances(SERVICE).map((i) => i.id),
        ['b'],
      );
      assert.deepEqual(registry.instances('ws/nothing/preview/w'), []);
    });

    it('keeps what an instance says about itself: address, capacity and meta', async () => {
      const given = { ...instance('a'), capacity: 3, meta: { svc_worker: 'w0' } };
      await registry.register(given);
      const [found] = registry.instances(SERVICE);
      assert.deepEqual(found?.address, given.address);
      assert.equal(found?.capacity, 3);
      assert.equal(found?.meta.svc_worker, 'w0');
      assert.equal(found?.service, SERVICE);
    });

    it('replaces an instance registered again with the same id', async () => {
      await registry.register(instance('a', SERVICE, 1001));
      await registry.register(instance('a', SERVICE, 1002));
      const listed = registry.instances(SERVICE);
      assert.equal(listed.length, 1);
      assert.deepEqual(listed[0]?.address, instance('a', SERVICE, 1002).address);
    });

    it('pushes the full current list of a service to watchers on every change', async () => {
      const seen: string[] = [];
      const unwatch = registry.watch((service, instances) => seen.push(`${service}:${instances.map((i) => i.id).join(',')}`));
      await registry.register(instance('a'));
      await registry.register(instance('b'));
      await registry.deregister('a');
      unwatch();
      await registry.deregister('b');
      assert.deepEqual(seen, [`${SERVICE}:a`, `${SERVICE}:a,b`, `${SERVICE}:b`]);
    });

    it('moves an instance re-registered under another service, telling both services', async () => {
      const seen: string[] = [];
      registry.watch((service, instances) => seen.push(`${service}:${instances.length}`));
      await registry.register(instance('a', 'ws/app/preview/s1'));
      await registry.register(instance('a', 'ws/app/preview/s2'));
      assert.deepEqual(registry.instances('ws/app/preview/s1'), []);
      assert.equal(registry.instances('ws/app/preview/s2').length, 1);
      assert.deepEqual(seen, ['ws/app/preview/s1:1', 'ws/app/preview/s1:0', 'ws/app/preview/s2:1']);
    });

    it('hands out frozen snapshots that later changes do not alter', async () => {
      await registry.register(instance('a'));
      const before = registry.instances(SERVICE);
      await registry.register(instance('b'));
      assert.equal(before.length, 1);
      assert.ok(Object.isFrozen(before));
      assert.equal(registry.instances(SERVICE).length, 2);
    });

    it('stops pushing to a listener once it unsubscribed, and to everyone after close', async () => {
      let calls = 0;
      const unwatch = registry.watch(() => {
        calls += 1;
      });
      unwatch();
      await registry.register(instance('a'));
      assert.equal(calls, 0);
      registry.watch(() => {
        calls += 1;
      });
      await registry.close();
      assert.equal(calls, 0);
    });
  });
}
