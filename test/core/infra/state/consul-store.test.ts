import assert from 'node:assert/strict';
import { SvcError } from '../../../../core/model/errors.js';
import { ConsulStateStore } from '../../../../core/infra/state/consul-store.js';
import { escapeKey, unescapeKey } from '../../../../core/infra/state/consul-keys.js';
import { startConsulStandin, type ConsulStandin } from '../../../standins/consul/index.js';
import { validateKvKey } from '../../../standins/consul/kv.js';
import { assertCode, describeStateStoreConformance } from './conformance.js';

describe('ConsulStateStore', () => {
  let consul: ConsulStandin;
  let serial = 0;
  before(async () => {
    consul = await startConsulStandin();
  });
  after(async () => {
    await consul.close();
  });

  // Each store gets its own prefix in one Consul, which also shows that stores under different prefixes do not see each other.
  describeStateStoreConformance(
    'Consul KV store (stand-in)',
    async () => new ConsulStateStore({ address: consul.url, prefix: `svc-${++serial}/` }),
  );

  describe('key escaping', () => {
    it('escapes every key into characters Consul accepts, reversibly, keeping prefixes prefixes', () => {
      for (const key of ['apps/ws/app', 'a b/☃/\u{1F600}', 'config.json', 'x/../y', 'trailing/', 'a,b', 'a%2Fb', 'tab\tx']) {
        const escaped = escapeKey(key);
        assert.equal(validateKvKey(`svc/${escaped}`), null, `${key} → ${escaped}`);
        assert.equal(unescapeKey(escaped), key);
      }
      assert.equal(escapeKey('apps/my-app_1'), 'apps/my-app_1');
      assert.ok(escapeKey('apps.json/x').startsWith(escapeKey('apps.json')));
      assert.ok(!escapeKey('ab').startsWith(escapeKey('é')));
    });

    it('stores keys under the prefix, escaped, where other Consul clients can read them', async () => {
      const store = new ConsulStateStore({ address: consul.url, prefix: 'svc-layout/' });
      await store.put('apps/ws/my app.json', '{}');
      assert.deepEqual(
        [...consul.state.kv.keys()].filter((k) => k.startsWith('svc-layout/')),
        ['svc-layout/apps/ws/my,20app,2Ejson'],
      );
      await store.close();
    });
  });

  describe('against Consul failures', () => {
    it('answers state_unavailable, with the ACL hint, when Consul refuses the token', async () => {
      const guarded = await startConsulStandin({ aclToken: 'secret' });
      const store = new ConsulStateStore({ address: guarded.url, token: 'wrong' });
      const error = await assertCode(store.get('k'), 'state_unavailable');
      assert.match(error.hint ?? '', /key_prefix "svc\/"/);
      const allowed = new ConsulStateStore({ address: guarded.url, token: 'secret' });
      assert.equal(await allowed.put('k', 'v'), true);
      assert.equal((await allowed.get('k'))?.value.toString(), 'v');
      assert.equal(
        guarded.requests.some((r) => r.status === 403),
        true,
      );
      await store.close();
      await allowed.close();
      await guarded.close();
    });

    it('answers state_unavailable when Consul is unreachable or answers 500', async () => {
      const down = await startConsulStandin();
      const url = down.url;
      await down.close();
      const store = new ConsulStateStore({ address: url, timeoutMs: 2000 });
      const error = await assertCode(store.get('k'), 'state_unavailable');
      assert.match(error.message, /could not reach Consul/);
      await store.close();

      consul.failNext({ match: /^PUT \/v1\/kv\/svc-fail\//, count: 1 });
      const failing = new ConsulStateStore({ address: consul.url, prefix: 'svc-fail/' });
      await assertCode(failing.put('k', 'v'), 'state_unavailable');
      assert.equal(await failing.put('k', 'v'), true);
      await failing.close();
    });

    it('keeps a watch going through failing blocking queries, with back-off, until a change', async () => {
      const store = new ConsulStateStore({ address: consul.url, prefix: 'svc-flaky/', retryBaseMs: 20, retryMaxMs: 200 });
      const since = await store.index();
      consul.failNext({ match: /^GET \/v1\/kv\/svc-flaky\/w\//, count: 4 });
      const before = consul.requests.length;
      const woke = store.watch('w/', since, { waitMs: 30_000 });
      // Let the first read and the four failures pass, then write.
      while (consul.requests.slice(before).filter((r) => r.status === 500).length < 4) await new Promise((r) => setTimeout(r, 10));
      await store.put('w/a', '1');
      assert.ok((await woke) > since);
      await store.close();
    });

    it("returns a lower index at once when Consul's index went backwards (snapshot restore)", async () => {
      const store = new ConsulStateStore({ address: consul.url, prefix: 'svc-restore/' });
      await store.put('w/a', '1');
      const snapshot = consul.snapshot();
      await store.put('w/a', '2');
      const since = await store.index();
      consul.restore(snapshot);
      const index = await store.watch('w/', since, { waitMs: 60_000 });
      assert.ok(index < since);
      assert.equal((await store.get('w/a'))?.value.toString(), '1');
      await store.close();
    });

    it('refuses a prefix that is not a plain folder', () => {
      for (const prefix of ['', 'svc', '/svc/', 'a b/', 'svc//']) {
        assert.throws(
          () => new ConsulStateStore({ address: consul.url, prefix }),
          (error: unknown) => error instanceof SvcError && error.code === 'config_invalid',
        );
      }
    });
  });
});
