import assert from 'node:assert/strict';
import { createEmbeddedRegistry } from '../../../../core/infra/registry/embedded.js';
import type { Instance } from '../../../../core/infra/registry/types.js';
import { untilInstances } from '../../../../core/infra/registry/until-instances.js';

const instance = (id: string, service: string): Instance => ({
  id,
  service,
  address: { kind: 'tcp', host: '127.0.0.1', port: 20000 },
  capacity: 1,
  meta: {},
});

describe('untilInstances (a deploy switches its route once the gateway sees the new unit)', () => {
  it('resolves at once when the service has an instance', async () => {
    const registry = createEmbeddedRegistry();
    await registry.register(instance('a', 'unit-1'));
    assert.equal(await untilInstances(registry, 'unit-1', 1000), true);
  });

  it('resolves when an instance of that service appears, not for another service', async () => {
    const registry = createEmbeddedRegistry();
    let settled = false;
    const waiting = untilInstances(registry, 'unit-1', 5000).then((found) => {
      settled = true;
      return found;
    });
    await registry.register(instance('b', 'unit-2'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(settled, false, "another service's instance does not count");
    await registry.register(instance('a', 'unit-1'));
    assert.equal(await waiting, true);
  });

  it('gives up with false after its bound', async () => {
    const registry = createEmbeddedRegistry();
    const started = Date.now();
    assert.equal(await untilInstances(registry, 'unit-1', 50), false);
    assert.ok(Date.now() - started >= 45);
  });
});
