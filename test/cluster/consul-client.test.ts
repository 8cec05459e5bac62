/**
 * core/infra/state/consul-client.ts (the npm `consul` package under svc's adapter)
 * against a real Consul agent: what the state store, the registry and leader
 * election rely on, as the agent answers it. Opt-in: runs when `CONSUL_BIN`
 * names a consul binary or `consul` is on PATH, and says it skipped otherwise.
 * The agent is the cluster suite's (test/cluster/agents.ts): the shipped config, ACLs on.
 */
import assert from 'node:assert/strict';
import Consul from 'consul';
import { ConsulClient, ConsulError } from '../../core/infra/state/consul-client.js';
import { findBinary, startConsul, type ConsulAgent } from './agents.js';

describe('ConsulClient against a real Consul agent', function () {
  this.timeout(60_000);
  let agent: ConsulAgent;
  let consul: ConsulClient;
  const open: ConsulClient[] = [];
  const client = (token?: string): ConsulClient => {
    const made = new ConsulClient({ address: agent.url, token });
    open.push(made);
    return made;
  };

  before(async function () {
    const binary = findBinary('CONSUL_BIN', 'consul');
    if (binary === null) {
      console.log('    (skipped: set CONSUL_BIN to a consul binary, or put consul on PATH, to run these against a real agent)');
      this.skip();
    }
    agent = await startConsul(binary);
    consul = client(agent.rootToken);
  });

  after(async () => {
    for (const made of open) made.close();
    await agent?.stop();
  });

  it("round-trips a value's bytes exactly, an empty value as no bytes", async () => {
    const bytes = Buffer.from([0xff, 0x00, 0xfe, 0x80, 0x0a]);
    assert.equal(await consul.kvSet('svc/bytes', bytes), true);
    assert.equal(await consul.kvSet('svc/empty', Buffer.alloc(0)), true);
    const [entry] = (await consul.kvGet('svc/bytes')).value;
    assert.deepEqual(entry?.Value, bytes);
    assert.deepEqual((await consul.kvGet('svc/empty')).value[0]?.Value, Buffer.alloc(0));
  });

  it('reads X-Consul-Index on a 404: a missing key, an empty prefix listed or its keys', async () => {
    const missing = await consul.kvGet('svc/missing');
    assert.deepEqual(missing.value, []);
    assert.ok(missing.index !== null && missing.index > 0);
    const listed = await consul.kvGet('svc/nothing-under/', { recurse: true });
    assert.deepEqual(listed.value, []);
    assert.ok(listed.index !== null && listed.index > 0);
    const keys = await consul.kvKeys('svc/nothing-under/');
    assert.deepEqual(keys.value, []);
    assert.ok(keys.index !== null && keys.index > 0);
  });

  it('the package alone, as typed, loses what the adapter keeps: the index of a read, and an empty listing on a 404', async () => {
    // Why the adapter exists (docs/architecture.md; test/core/infra/state/consul-package.test.ts shows the same against the stand-in).
    const { hostname, port } = new URL(agent.url);
    const bare = new Consul({ host: hostname, port: Number(port), defaults: { token: agent.rootToken } });
    try {
      assert.equal(await consul.kvSet('svc/typed', Buffer.from('1')), true);
      const entry = await bare.kv.get('svc/typed');
      assert.deepEqual(
        Object.keys(entry ?? {}).sort(),
        ['CreateIndex', 'Flags', 'Key', 'LockIndex', 'ModifyIndex', 'Value'],
        'the body only, no X-Consul-Index',
      );
      assert.ok(((await consul.kvGet('svc/typed')).index ?? 0) > 0, 'the adapter reads it');
      assert.equal(await bare.kv.get('svc/typed-missing'), undefined);
      await assert.rejects(bare.kv.keys('svc/typed-nothing-under/'), /not found/i);
    } finally {
      bare.destroy();
    }
  });

  it('sends keys percent-encoded as a whole (slashes too), which Consul decodes into the key', async () => {
    assert.equal(await consul.kvSet('svc/enc/a/b,2E c', Buffer.from('1')), true);
    assert.deepEqual((await consul.kvKeys('svc/enc/')).value, ['svc/enc/a/b,2E c']);
    assert.deepEqual((await consul.kvKeys('svc/enc/', { separator: '/' })).value, ['svc/enc/a/']);
  });

  it('does compare-and-set: 0 creates only, a ModifyIndex writes or deletes only that version', async () => {
    assert.equal(await consul.kvSet('svc/cas', Buffer.from('1'), { cas: 0 }), true);
    assert.equal(await consul.kvSet('svc/cas', Buffer.from('2'), { cas: 0 }), false);
    const at = (await consul.kvGet('svc/cas')).value[0]!.ModifyIndex;
    assert.equal(await consul.kvSet('svc/cas', Buffer.from('3'), { cas: at + 1000 }), false);
    assert.equal(await consul.kvSet('svc/cas', Buffer.from('3'), { cas: at }), true);
    assert.equal(await consul.kvDelete('svc/cas', { cas: at }), false);
    assert.equal(await consul.kvDelete('svc/absent', { cas: 7 }), true, 'deleting an absent key succeeds, with or without cas');
  });

  it('answers a blocking query once a write passes its index, and an abort cancels one mid-wait', async () => {
    const { index } = await consul.kvGet('svc/watched/', { recurse: true });
    const woke = consul.kvGet('svc/watched/', { recurse: true, block: { index: index!, waitMs: 60_000 } });
    await consul.kvSet('svc/watched/a', Buffer.from('x'));
    const read = await woke;
    assert.ok(read.index! > index!);
    assert.deepEqual(
      read.value.map((e) => e.Key),
      ['svc/watched/a'],
    );

    const controller = new AbortController();
    const reason = new Error('stop watching');
    const waiting = consul.kvGet('svc/watched/', {
      recurse: true,
      block: { index: read.index!, waitMs: 60_000 },
      signal: controller.signal,
    });
    controller.abort(reason);
    await assert.rejects(waiting, (error) => error === reason);
  });

  it('runs a lock: acquire, refuse another session, release on destroy; a gone session is 404 to renew and 500 to acquire', async () => {
    const one = await consul.sessionCreate({ name: 'one', ttl: '10s', behavior: 'release', lockDelay: '0s' });
    const two = await consul.sessionCreate({ name: 'two', ttl: '10s', behavior: 'release', lockDelay: '0s' });
    assert.equal(await consul.kvSet('svc/lock', Buffer.from('one'), { acquire: one }), true);
    assert.equal(await consul.kvSet('svc/lock', Buffer.from('two'), { acquire: two }), false);
    assert.equal((await consul.kvGet('svc/lock')).value[0]?.Session, one);
    await consul.sessionRenew(one);
    await consul.sessionDestroy(one);
    assert.equal((await consul.kvGet('svc/lock')).value[0]?.Session, undefined, 'destroying the session released the key');
    await assert.rejects(
      consul.sessionRenew(one),
      (error) => error instanceof ConsulError && error.status === 404 && /Session id '.*' not found/.test(error.body),
    );
    await assert.rejects(
      consul.kvSet('svc/lock', Buffer.from('one'), { acquire: one }),
      (error) => error instanceof ConsulError && error.status === 500 && /invalid session/.test(error.body),
    );
    assert.equal(await consul.kvSet('svc/lock', Buffer.alloc(0), { release: two }), false, 'releasing a lock the session does not hold');
    await consul.sessionDestroy(two);
  });

  it("lists a registered service's passing instances, and a deregistered one no more", async () => {
    const before = await consul.healthService('svc-web');
    assert.deepEqual(before.value, []);
    assert.ok(before.index !== null && before.index > 0);
    await consul.registerService({
      ID: 'web-1',
      Name: 'svc-web',
      Address: '10.0.0.1',
      Port: 8080,
      Tags: ['svc'],
      Meta: { svc_capacity: '2' },
    });
    const [entry] = (await consul.healthService('svc-web')).value;
    assert.deepEqual(
      { id: entry?.Service.ID, address: entry?.Service.Address, port: entry?.Service.Port, meta: entry?.Service.Meta },
      { id: 'web-1', address: '10.0.0.1', port: 8080, meta: { svc_capacity: '2' } },
    );
    await consul.deregisterService('web-1');
    assert.deepEqual((await consul.healthService('svc-web')).value, []);
    await assert.rejects(
      consul.deregisterService('web-1'),
      (error) => error instanceof ConsulError && error.status === 404 && /Unknown service ID "web-1"/.test(error.body),
    );
  });

  it("quotes Consul's ACL denials: 403 for an unknown token, and for no token where a read names one key", async () => {
    await assert.rejects(
      client('not-a-token').kvGet('svc/k'),
      (error) => error instanceof ConsulError && error.status === 403 && error.body === 'ACL not found',
    );
    const anonymous = client();
    await assert.rejects(
      anonymous.kvGet('svc/k'),
      (error) =>
        error instanceof ConsulError &&
        error.status === 403 &&
        /^Permission denied: anonymous token lacks permission 'key:read' on "svc\/k"/.test(error.body),
    );
    await assert.rejects(
      anonymous.kvSet('svc/k', Buffer.from('v')),
      (error) => error instanceof ConsulError && error.status === 403 && /'key:write' on "svc\/k"/.test(error.body),
    );
    await assert.rejects(
      anonymous.sessionCreate({ name: 'x', ttl: '10s', behavior: 'release', lockDelay: '0s' }),
      (error) => error instanceof ConsulError && error.status === 403 && new RegExp(`'session:write' on "${agent.node}"`).test(error.body),
    );
  });

  it('filters instead of refusing the reads that list: no token lists no keys and no instances', async () => {
    await consul.kvSet('svc/filtered/a', Buffer.from('1'));
    await consul.registerService({ ID: 'hidden-1', Name: 'svc-hidden', Address: '10.0.0.2', Port: 80, Tags: [], Meta: {} });
    const anonymous = client();
    assert.deepEqual((await anonymous.kvGet('svc/filtered/', { recurse: true })).value, []);
    assert.deepEqual((await anonymous.kvKeys('svc/filtered/')).value, []);
    assert.deepEqual((await anonymous.healthService('svc-hidden')).value, []);
    await consul.deregisterService('hidden-1');
  });
});
