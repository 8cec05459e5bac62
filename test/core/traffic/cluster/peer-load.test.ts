/** The leader's PeerLoad against a memory store, on a clock the test moves. */
import assert from 'node:assert/strict';
import { LOAD_PREFIX } from '../../../../core/traffic/cluster/load-record.js';
import type { LoadRecord, UnitLoad } from '../../../../core/traffic/cluster/load-record.js';
import { PeerLoad, type PeerLoadOptions } from '../../../../core/traffic/cluster/peer-load.js';
import { isSvcError } from '../../../../core/model/errors.js';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';
import type { StateStore } from '../../../../core/model/store/types.js';
import { until } from '../../../helpers/until.js';

const U = 'default/app/deployed/u';
const V = 'default/app/deployed/v';
const W = 'default/app/deployed/w';
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('PeerLoad', () => {
  let store: StateStore;
  let peers: PeerLoad | undefined;
  let clock: number;
  let reports: unknown[];
  let changes: string[][];

  beforeEach(() => {
    store = createMemoryStateStore();
    clock = 1_000_000;
    reports = [];
    changes = [];
  });
  afterEach(async () => {
    await peers?.close();
    peers = undefined;
    await store.close();
  });

  const put = (replica: string, units: Record<string, UnitLoad>) =>
    store.put(LOAD_PREFIX + replica, JSON.stringify({ version: 1, units } satisfies LoadRecord));
  async function start(options: Partial<PeerLoadOptions> = {}): Promise<PeerLoad> {
    peers = new PeerLoad({
      store,
      self: 'me',
      now: () => clock,
      report: (error) => reports.push(error),
      onChange: (units) => changes.push(units),
      ...options,
    });
    await peers.start();
    return peers;
  }

  it('sums the fresh records of the other replicas, never its own', async () => {
    await put('a', { [U]: { queued: 2, instances: { c1: { inFlight: 1, idleMs: 0 } } }, [V]: { queued: 1, instances: {} } });
    await put('b', { [U]: { queued: 1, instances: { c1: { inFlight: 2, idleMs: 0 }, c2: { inFlight: 3, idleMs: 0 } } } });
    await put('me', { [U]: { queued: 100, instances: { c1: { inFlight: 100, idleMs: 0 } } } });
    const peers = await start();
    assert.deepEqual(peers.load(U), { inFlight: 6, queued: 3 });
    assert.deepEqual(peers.load(V), { inFlight: 0, queued: 1 });
    assert.deepEqual(peers.load(W), { inFlight: 0, queued: 0 });
    assert.deepEqual(peers.use('c1'), { inFlight: 3, lastActiveAt: clock });
    assert.deepEqual(peers.use('c3'), { inFlight: 0, lastActiveAt: undefined });
    assert.deepEqual(reports, []);
  });

  it('drops the counts of a record not rewritten within freshMs, but keeps its last use', async () => {
    await put('a', { [U]: { queued: 1, instances: { c1: { inFlight: 1, idleMs: 250 } } } });
    const peers = await start({ freshMs: 5_000 });
    const receivedAt = clock;
    assert.deepEqual(
      peers.use('c1'),
      { inFlight: 1, lastActiveAt: receivedAt - 250 },
      'the idle duration is subtracted from the time it arrived here',
    );
    clock += 5_000;
    assert.deepEqual(peers.load(U), { inFlight: 1, queued: 1 }, 'still fresh at freshMs');
    clock += 1;
    assert.deepEqual(peers.load(U), { inFlight: 0, queued: 0 }, 'stale');
    assert.deepEqual(peers.use('c1'), { inFlight: 0, lastActiveAt: receivedAt - 250 });

    // Rewritten with the same numbers: fresh again, and the last use by the new arrival.
    await put('a', { [U]: { queued: 1, instances: { c1: { inFlight: 1, idleMs: 4_000 } } } });
    await until('the rewrite is read', () => peers.load(U).queued === 1, 1_000);
    assert.deepEqual(peers.use('c1'), { inFlight: 1, lastActiveAt: clock - 4_000 });
  });

  it('deletes the records left unchanged for a day (replicas that died), keeps one written since', async () => {
    await put('dead', { [U]: { queued: 0, instances: { c1: { inFlight: 0, idleMs: 10 } } } });
    await put('idle', { [U]: { queued: 0, instances: { c2: { inFlight: 0, idleMs: 10 } } } });
    const peers = await start();
    clock += 24 * 60 * 60_000;
    await put('busy', { [U]: { queued: 1, instances: {} } }); // any change makes the leader read the records again
    await until('the change is read', () => peers.load(U).queued === 1, 1_000);
    const keys = async () => (await store.keys(LOAD_PREFIX)).join();
    for (let i = 0; i < 50 && (await keys()) !== `${LOAD_PREFIX}busy`; i++) await wait(20);
    assert.equal(await keys(), `${LOAD_PREFIX}busy`);
    assert.equal(peers.use('c1').lastActiveAt, undefined, 'forgotten here too');
    assert.deepEqual(reports, []);
  });

  it('takes the latest last use over all records, fresh or stale', async () => {
    await put('a', { [U]: { queued: 0, instances: { c1: { inFlight: 0, idleMs: 1_000 } } } });
    const peers = await start();
    const first = clock - 1_000;
    clock += 60_000;
    await put('b', { [U]: { queued: 0, instances: { c1: { inFlight: 0, idleMs: 70_000 } } }, [V]: { queued: 1, instances: {} } });
    await until('b is read', () => changes.length === 1, 1_000);
    assert.equal(peers.use('c1').lastActiveAt, first, 'b used it earlier than a');
    await put('b', { [U]: { queued: 0, instances: { c1: { inFlight: 0, idleMs: 10 } } } });
    await until('the later use counts', () => peers.use('c1').lastActiveAt === clock - 10, 1_000);
  });

  it('tells which units changed their counts after each reload, and forgets deleted records', async () => {
    await put('a', { [U]: { queued: 1, instances: {} } });
    const peers = await start();
    assert.deepEqual(changes, [[U]], 'the first load');
    await put('b', { [V]: { queued: 1, instances: { c9: { inFlight: 1, idleMs: 5 } } } });
    await until('the change is told', () => changes.length === 2, 1_000);
    assert.deepEqual(changes[1], [V]);
    // A heartbeat with the same counts (another idle duration) is no change; the next real one is.
    await put('b', { [V]: { queued: 1, instances: { c9: { inFlight: 1, idleMs: 900 } } } });
    await put('a', { [U]: { queued: 1, instances: {} }, [W]: { queued: 2, instances: {} } });
    await until('the change is told', () => changes.length === 3, 1_000);
    assert.deepEqual(changes[2], [W]);
    await store.delete(`${LOAD_PREFIX}a`);
    await until('the deletion is told', () => changes.length === 4, 1_000);
    assert.deepEqual(changes[3], [U, W]);
    assert.deepEqual(peers.load(U), { inFlight: 0, queued: 0 });
    assert.deepEqual(peers.load(V), { inFlight: 1, queued: 1 });
  });

  it('reports an undecodable record once per version and skips it', async () => {
    await store.put(`${LOAD_PREFIX}bad`, 'not json');
    await put('a', { [U]: { queued: 1, instances: {} } });
    const peers = await start();
    assert.equal(reports.length, 1);
    assert.ok(isSvcError(reports[0]) && reports[0].code === 'state_corrupt');
    assert.deepEqual(peers.load(U), { inFlight: 0, queued: 1 });

    await put('a', { [U]: { queued: 2, instances: {} } });
    await until('a reload', () => peers.load(U).queued === 2, 1_000);
    assert.equal(reports.length, 1, 'the same bad version is not reported again');

    await store.put(`${LOAD_PREFIX}bad`, JSON.stringify({ version: 1, units: { [U]: { queued: -1, instances: {} } } }));
    await until('the new bad version is reported', () => reports.length === 2, 1_000);
    assert.match((reports[1] as Error).message, /negative "units\.default\/app\/deployed\/u\.queued"/);
    assert.deepEqual(peers.load(U), { inFlight: 0, queued: 2 });
  });

  it('stops when the store closes', async () => {
    const peers = await start();
    await store.close();
    await wait(50);
    await peers.close();
    assert.deepEqual(reports, []);
  });
});
