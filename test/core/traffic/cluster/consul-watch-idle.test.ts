import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { RouteFollower } from '../../../../core/traffic/cluster/route-sync.js';
import { PeerLoad } from '../../../../core/traffic/cluster/peer-load.js';
import { TokenIndex } from '../../../../core/services/auth/token-index.js';
import { authServices } from '../../services/auth/fixtures.js';
import { RouteTable } from '../../../../core/traffic/gateway/route-table.js';
import { ConsulStateStore } from '../../../../core/infra/state/consul-store.js';
import { startConsulStandin, type ConsulStandin } from '../../../standins/consul/index.js';

class Counting extends ConsulStateStore {
  lists = 0;
  override async list(prefix: string) {
    this.lists++;
    return super.list(prefix);
  }

  /** How many times the watcher started on this store lists in 1 s; then closes it, and the store. */
  async listsWhileIdle(watcher: { close(): Promise<void> }): Promise<number> {
    const before = this.lists;
    await sleep(1000);
    const lists = this.lists - before;
    await watcher.close();
    await this.close();
    return lists;
  }
}

/**
 * A watch loop that waited from the store's index would wake at once, every
 * time, on Consul KV (a prefix's index is the highest write under it): each
 * replica would re-read its prefix hundreds of times a second.
 */
describe('watchers on Consul KV idle while nothing under their prefix changes (stand-in)', () => {
  let consul: ConsulStandin;
  before(async () => {
    consul = await startConsulStandin();
  });
  after(async () => {
    await consul.close();
  });

  it('RouteFollower does not re-list the routes in a loop after a write elsewhere in the prefix', async () => {
    const store = new Counting({ address: consul.url, prefix: 'svc-a/' });
    await store.put('gateway/routes/ws/app/w', '{"not":"a route"}');
    await store.put('apps/ws/app.json', '{}'); // any later write outside gateway/routes/ (a deploy record, a load report, a token)
    const follower = new RouteFollower({ store, routes: new RouteTable(), report: () => {} });
    await follower.start();
    const lists = await store.listsWhileIdle(follower);
    assert.ok(lists <= 2, `the follower listed gateway/routes/ ${lists} times in 1 s with nothing changing there`);
  });

  it('PeerLoad does not re-list the load records in a loop after a write elsewhere in the prefix', async () => {
    const store = new Counting({ address: consul.url, prefix: 'svc-b/' });
    await store.put('gateway/load/other', JSON.stringify({ version: 1, units: {} }));
    await store.put('gateway/routes/ws/app/w', '{}');
    const peers = new PeerLoad({ store, self: 'me', report: () => {} });
    await peers.start();
    const lists = await store.listsWhileIdle(peers);
    assert.ok(lists <= 2, `the leader listed gateway/load/ ${lists} times in 1 s with nothing changing there`);
  });

  it('TokenIndex does not re-list the tokens in a loop after a write elsewhere in the prefix', async () => {
    const store = new Counting({ address: consul.url, prefix: 'svc-c/' });
    const services = await authServices(store);
    await services.tokens.create({}, { workspace: 'default', subject: services.owner.id });
    await store.put('apps/ws/app.json', '{}');
    const index = await TokenIndex.open(store, { onError: () => {} });
    const lists = await store.listsWhileIdle({
      close: async () => {
        await index.close();
        await services.close();
      },
    });
    assert.ok(lists <= 2, `the token index listed tokens/ ${lists} times in 1 s with nothing changing there`);
  });
});
