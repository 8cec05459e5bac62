import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConsulRegistry, defaultServiceName } from '../../../../core/infra/registry/consul.js';
import type { Instance } from '../../../../core/infra/registry/types.js';
import { startConsulStandin, type ConsulStandin } from '../../../standins/consul/index.js';
import { describeRegistryConformance, SERVICE } from './conformance.js';
import { until } from '../../../helpers/until.js';

describeRegistryConformance('Consul registry (stand-in)', async () => {
  const consul = await startConsulStandin();
  return {
    registry: new ConsulRegistry({ address: consul.url }),
    instance: (id, service = SERVICE, port = 20000) => ({
      id,
      service,
      address: { kind: 'tcp', host: '127.0.0.1', port },
      capacity: 1,
      meta: {},
    }),
    cleanup: () => consul.close(),
  };
});

/** Resolves with the first list pushed for `service` that `accept` takes (generous bound: 30 s). */
function nextPush(
  registry: ConsulRegistry,
  service: string,
  accept: (instances: readonly Instance[]) => boolean,
): Promise<readonly Instance[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      unwatch();
      reject(new Error(`no matching push for ${service}`));
    }, 30_000);
    const unwatch = registry.watch((pushed, instances) => {
      if (pushed !== service || !accept(instances)) return;
      clearTimeout(timer);
      unwatch();
      resolve(instances);
    });
  });
}

async function agentRegister(consul: ConsulStandin, body: unknown): Promise<void> {
  const response = await fetch(`${consul.url}/v1/agent/service/register`, { method: 'PUT', body: JSON.stringify(body) });
  assert.equal(response.status, 200, await response.text());
}

describe('ConsulRegistry', () => {
  let consul: ConsulStandin;
  let registry: ConsulRegistry;
  const name = defaultServiceName(SERVICE);
  beforeEach(async () => {
    consul = await startConsulStandin();
  });
  afterEach(async () => {
    await registry?.close();
    await consul.close();
  });

  it("names a unit's Consul service like the Nomad job that registers it", () => {
    assert.equal(defaultServiceName('ws/app/deployed/w'), 'svc-ws--app--w');
    assert.equal(
      defaultServiceName('ws/app/preview@3/w'),
      'svc-ws--app--w--preview--s3',
      'each serving unit of a redeploy is its own job and service',
    );
  });

  it('reads instances Nomad registered, with their address and the capacity from their Meta', async () => {
    await agentRegister(consul, {
      ID: '_nomad-task-1-runtime-x-w0',
      Name: name,
      Address: '10.0.0.5',
      Port: 23456,
      Tags: ['svc'],
      Meta: { svc_concurrency: '4', 'external-source': 'nomad' },
    });
    registry = new ConsulRegistry({ address: consul.url });
    const instances = await registry.track(SERVICE);
    assert.deepEqual(
      instances.map((i) => [i.id, i.address, i.capacity]),
      [['_nomad-task-1-runtime-x-w0', { kind: 'tcp', host: '10.0.0.5', port: 23456 }, 4]],
    );
  });

  it('pushes an instance registered behind its back, through a blocking query', async () => {
    registry = new ConsulRegistry({ address: consul.url });
    await registry.track(SERVICE);
    const pushed = nextPush(registry, SERVICE, (list) => list.length === 1);
    await agentRegister(consul, { ID: 'x1', Name: name, Address: '127.0.0.1', Port: 20001 });
    assert.deepEqual(
      (await pushed).map((i) => i.id),
      ['x1'],
    );
    const health = consul.requests.filter((r) => r.path === `/v1/health/service/${name}`);
    assert.ok(
      health.some((r) => /[?&]index=\d+/.test(r.query) && /[?&]wait=/.test(r.query) && /[?&]passing/.test(r.query)),
      'it used blocking queries',
    );
  });

  it('keeps only passing instances: a critical check removes the instance, a passing one brings it back', async () => {
    let healthy = true;
    const app: Server = createServer((_req, res) => res.writeHead(healthy ? 200 : 503).end(healthy ? 'ok' : 'down'));
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    const { port } = app.address() as AddressInfo;
    try {
      registry = new ConsulRegistry({ address: consul.url });
      await registry.track(SERVICE);
      const up = nextPush(registry, SERVICE, (list) => list.length === 1);
      // A check starts critical: the instance shows up only once the stand-in's probe passed.
      await agentRegister(consul, {
        ID: 'w0',
        Name: name,
        Address: '127.0.0.1',
        Port: port,
        Check: { HTTP: `http://127.0.0.1:${port}/_svc/health`, Interval: '1s', Timeout: '1s' },
      });
      assert.deepEqual(registry.instances(SERVICE), []);
      await up;
      const down = nextPush(registry, SERVICE, (list) => list.length === 0);
      healthy = false;
      await down;
      const back = nextPush(registry, SERVICE, (list) => list.length === 1);
      healthy = true;
      await back;
    } finally {
      app.closeAllConnections();
      await new Promise<void>((resolve) => app.close(() => resolve()));
    }
  });

  it("resets its index to 0 when Consul's index goes backwards, and reads the restored state", async () => {
    registry = new ConsulRegistry({ address: consul.url, waitMs: 1000 });
    await agentRegister(consul, { ID: 'a', Name: name, Address: '127.0.0.1', Port: 20001 });
    const snapshot = consul.snapshot();
    await agentRegister(consul, { ID: 'b', Name: name, Address: '127.0.0.1', Port: 20002 });
    await agentRegister(consul, { ID: 'c', Name: name, Address: '127.0.0.1', Port: 20003 });
    assert.deepEqual(
      (await registry.track(SERVICE)).map((i) => i.id),
      ['a', 'b', 'c'],
    );
    const restored = nextPush(registry, SERVICE, (list) => list.length === 1);
    consul.restore(snapshot);
    // The restored index is below the registry's: a client that only took higher indexes would never see this.
    assert.deepEqual(
      (await restored).map((i) => i.id),
      ['a'],
    );
    const after = nextPush(registry, SERVICE, (list) => list.length === 2);
    await agentRegister(consul, { ID: 'd', Name: name, Address: '127.0.0.1', Port: 20004 });
    assert.deepEqual(
      (await after).map((i) => i.id),
      ['a', 'd'],
    );
  });

  it('backs off exponentially while Consul answers 500, then recovers', async () => {
    const delays: number[] = [];
    registry = new ConsulRegistry({
      address: consul.url,
      retryBaseMs: 20,
      retryMaxMs: 10_000,
      onError: (_e, _attempt, delay) => delays.push(delay),
    });
    await agentRegister(consul, { ID: 'a', Name: name, Address: '127.0.0.1', Port: 20001 });
    consul.failNext({ match: new RegExp(`^GET /v1/health/service/${name}$`), count: 5 });
    assert.deepEqual(
      (await registry.track(SERVICE)).map((i) => i.id),
      ['a'],
    );
    assert.deepEqual(delays, [20, 40, 80, 160, 320]);
    const health = consul.requests.filter((r) => r.path === `/v1/health/service/${name}`);
    assert.deepEqual(
      health.slice(0, 6).map((r) => r.status),
      [500, 500, 500, 500, 500, 200],
    );
  });

  it('reads again at once on retryNow() (Consul answers again) instead of sleeping out its back-off, and keeps what it had meanwhile', async () => {
    await agentRegister(consul, { ID: 'a', Name: name, Address: '127.0.0.1', Port: 20001 });
    let failures = 0;
    registry = new ConsulRegistry({ address: consul.url, retryBaseMs: 60_000, retryMaxMs: 60_000, waitMs: 200, onError: () => failures++ });
    assert.deepEqual(
      (await registry.track(SERVICE)).map((i) => i.id),
      ['a'],
    );
    consul.failNext({ match: new RegExp(`^GET /v1/health/service/${name}$`), count: 1 });
    await until('a read failed and the watch sleeps a minute', () => failures === 1, { timeoutMs: 10_000 });
    assert.deepEqual(
      registry.instances(SERVICE).map((i) => i.id),
      ['a'],
      'the last known instances stay',
    );
    await agentRegister(consul, { ID: 'b', Name: name, Address: '127.0.0.1', Port: 20002 });
    const pushed = nextPush(registry, SERVICE, (instances) => instances.length === 2);
    registry.retryNow();
    const started = Date.now();
    assert.deepEqual(
      (await pushed).map((i) => i.id),
      ['a', 'b'],
    );
    assert.ok(Date.now() - started < 5000, 'read again well before the minute of back-off');
  });

  it('rejects a registration the agent refuses, quoting Consul', async () => {
    registry = new ConsulRegistry({ address: consul.url });
    await assert.rejects(
      registry.register({ id: 'a', service: SERVICE, address: { kind: 'tcp', host: '0.0.0.0', port: 1 }, capacity: 1, meta: {} }),
      (error: { code?: string; message: string }) => error.code === 'internal' && /Invalid service address/.test(error.message),
    );
    await assert.rejects(
      registry.register({ id: 'a', service: SERVICE, address: { kind: 'unix', socketPath: '/tmp/x' }, capacity: 1, meta: {} }),
      { code: 'bad_request' },
    );
  });
});
