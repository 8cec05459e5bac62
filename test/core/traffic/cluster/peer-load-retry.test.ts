/** The leader's PeerLoad after failed reads (a Consul agent restart, a Consul leader election): it goes on. */
import assert from 'node:assert/strict';
import { LOAD_PREFIX } from '../../../../core/traffic/cluster/load-record.js';
import { PeerLoad } from '../../../../core/traffic/cluster/peer-load.js';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';
import { until } from '../../../helpers/until.js';
import { FlakyStore } from '../../infra/state/flaky-store.js';

const U = 'default/app/deployed/u';
const record = (queued: number) => JSON.stringify({ version: 1, units: { [U]: { queued, instances: {} } } });

describe('PeerLoad after a failed Consul read', () => {
  let store: FlakyStore;
  let peers: PeerLoad | undefined;
  const reports: unknown[] = [];
  beforeEach(() => {
    store = new FlakyStore(createMemoryStateStore());
    reports.length = 0;
  });
  afterEach(async () => {
    await peers?.close();
    await store.close();
  });

  it('sees a follower queue after a list failed mid-watch', async () => {
    peers = new PeerLoad({ store, self: 'me', report: (error) => reports.push(error) });
    await peers.start();
    store.failLists = 1;
    await store.inner.put(`${LOAD_PREFIX}follower-1`, record(0)); // wakes the watch; its reload fails once
    await until('the failure is reported', () => reports.length === 1, 5_000);
    await store.inner.put(`${LOAD_PREFIX}follower-1`, record(3)); // a request queues on the follower
    await until("the leader reads the followers' load again", () => peers!.load(U).queued === 3, 5_000);
  });

  it('sees a follower queue after the first read failed', async () => {
    peers = new PeerLoad({ store, self: 'me', report: (error) => reports.push(error) });
    store.failLists = 1;
    await peers.start();
    await store.inner.put(`${LOAD_PREFIX}follower-1`, record(2));
    await until("the leader reads the followers' load", () => peers!.load(U).queued === 2, 5_000);
    assert.equal(reports.length, 1);
  });
});
