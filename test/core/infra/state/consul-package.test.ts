/**
 * Why core/infra/state/consul-client.ts wraps the npm `consul` package instead of
 * its callers using it directly (docs/architecture.md, "Dependencies and
 * why"): what the package's typed API leaves out and svc needs, shown against
 * the Consul stand-in next to the adapter that supplies it. A check here that
 * starts failing means the package gained what was missing, and the adapter
 * can shrink.
 */
import assert from 'node:assert/strict';
import Consul from 'consul';
import { ConsulClient } from '../../../../core/infra/state/consul-client.js';
import { startConsulStandin, type ConsulStandin } from '../../../standins/consul/index.js';

describe('the consul package, used as its typings allow, against what svc needs', () => {
  let standin: ConsulStandin;
  let consul: Consul;
  let client: ConsulClient;

  before(async () => {
    standin = await startConsulStandin();
    const { hostname, port } = new URL(standin.url);
    consul = new Consul({ host: hostname, port: Number(port) });
    client = new ConsulClient({ address: standin.url });
    await client.kvSet('svc/present', Buffer.from('v1'));
  });
  after(async () => {
    consul.destroy();
    client.close();
    await standin.close();
  });

  it('kv.get answers the entry alone: the X-Consul-Index a blocking query waits from is lost', async () => {
    const raw = await fetch(`${standin.url}/v1/kv/svc/present`);
    const index = Number(raw.headers.get('x-consul-index'));
    assert.ok(index > 0, 'Consul sends the index in a header, not in the body');
    const entry = await consul.kv.get('svc/present');
    assert.deepEqual(
      Object.keys(entry ?? {}).sort(),
      ['CreateIndex', 'Flags', 'Key', 'LockIndex', 'ModifyIndex', 'Value'],
      'the body only',
    );
    assert.equal((await client.kvGet('svc/present')).index, index, 'the adapter keeps it');
  });

  it('kv.get of an absent key answers undefined, without the index to wait for its creation from', async () => {
    assert.equal(await consul.kv.get('svc/absent'), undefined);
    const read = await client.kvGet('svc/absent');
    assert.deepEqual(read, { index: standin.index(), value: [] });
  });

  it('kv.keys of a prefix without keys rejects (Consul answers 404), where svc lists none and blocks on the index', async () => {
    await assert.rejects(consul.kv.keys('svc/nothing-here/'), /not found/i);
    assert.deepEqual(await client.kvKeys('svc/nothing-here/'), { index: standin.index(), value: [] });
  });

  it("the typings lack the per-call options the README documents (timeout, ctx) and the constructor's baseUrl", async () => {
    // Each @ts-expect-error fails the build once the package's typings gain the option.
    // @ts-expect-error the README's per-call `timeout` (and `ctx`, for cancelling) are not in the typings
    await consul.kv.get({ key: 'svc/present', timeout: 1000 });
    // @ts-expect-error the README's `baseUrl` (a path prefix, e.g. behind a proxy) is not in the typings either
    new Consul({ baseUrl: `${standin.url}/v1` }).destroy();
  });
});
