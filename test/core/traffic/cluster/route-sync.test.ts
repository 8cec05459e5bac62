import assert from 'node:assert/strict';
import { decodeRoute, encodeRoute, routeKey, ROUTES_PREFIX } from '../../../../core/traffic/cluster/route-codec.js';
import { RouteFollower, RoutePublisher } from '../../../../core/traffic/cluster/route-sync.js';
import { shuttingDownError } from '../../../../core/services/deployments/offline.js';
import { SvcError } from '../../../../core/model/errors.js';
import { errorAnswer } from '../../../../core/traffic/gateway/respond-error.js';
import { RouteTable } from '../../../../core/traffic/gateway/route-table.js';
import type { RouteEntry } from '../../../../core/traffic/gateway/types.js';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';
import type { StateStore } from '../../../../core/model/store/types.js';
import { endpoint, ref, routeEntry } from '../gateway/harness.js';
import { until } from '../../../helpers/until.js';
import { FlakyStore } from '../../infra/state/flaky-store.js';

const entry = (prefix: string, unit: string, host?: string): RouteEntry => ({
  ...routeEntry(endpoint(), unit, prefix),
  ...(host ? { host } : {}),
});
const units = (table: RouteTable): string[] =>
  table
    .entries()
    .map((e) => `${e.prefix}=${e.unit}`)
    .sort();
const isCorrupt = (field: RegExp) => (error: unknown) =>
  error instanceof SvcError && error.code === 'state_corrupt' && field.test(error.message);

describe('gateway route sync (leader → followers through the state store)', () => {
  let store: StateStore;
  let reports: unknown[];
  let closers: { close(): Promise<void> }[];
  const report = (error: unknown) => reports.push(error);

  beforeEach(() => {
    store = createMemoryStateStore();
    reports = [];
    closers = [];
  });
  afterEach(async () => {
    for (const closer of closers.reverse()) await closer.close();
    await store.close();
  });

  const publisher = async (routes: RouteTable, on: StateStore = store, retryMs?: number): Promise<RoutePublisher> => {
    const made = new RoutePublisher({ store: on, routes, report, retryMs });
    closers.push(made);
    await made.start();
    return made;
  };
  const follower = async (routes: RouteTable, on: StateStore = store): Promise<RouteFollower> => {
    const made = new RouteFollower({ store: on, routes, report, retryMs: 50 });
    closers.push(made);
    await made.start();
    return made;
  };

  it('keeps a follower table equal to the leader table through adds and removes', async () => {
    const leader = new RouteTable();
    leader.add([entry('/ws/a/x', 'u1', 'a-x.svc.test'), entry('/ws/a/y', 'u1')]);
    await publisher(leader);
    const table = new RouteTable();
    const sync = await follower(table);
    assert.ok(sync.synced());
    assert.deepEqual(units(table), units(leader));
    assert.equal(table.match('/greet', 'a-x.svc.test')?.entry.unit, 'u1');

    leader.add([entry('/ws/b/x', 'u2')]);
    leader.removeUnit('u1');
    leader.add([entry('/ws/c/x', 'u3')]);
    await until('the follower has the leader routes', () => units(table).join() === units(leader).join(), 5000);
    assert.deepEqual(units(table), ['/ws/b/x=u2', '/ws/c/x=u3']);
    assert.equal(table.match('/greet', 'a-x.svc.test'), null);
    assert.deepEqual(reports, []);
  });

  it('round-trips an offline route: the follower answers with the same error', async () => {
    const leader = new RouteTable();
    const offline = shuttingDownError(ref, 'w');
    leader.add([{ ...entry('/ws/a/x', 'u1'), offline }]);
    await publisher(leader);
    const table = new RouteTable();
    await follower(table);
    const copied = table.match('/ws/a/x')?.entry.offline;
    assert.ok(copied instanceof SvcError);
    assert.equal(copied.code, 'shutting_down');
    assert.equal(copied.hint, offline.hint);
    assert.deepEqual(errorAnswer(copied, 'r-1'), errorAnswer(offline, 'r-1'));
    assert.equal(errorAnswer(copied, 'r-1').status, 503);
    assert.equal(errorAnswer(copied, 'r-1').headers['Retry-After'], '5');
  });

  it('does not serve a host on a follower that another unit holds on the leader', async () => {
    const leader = new RouteTable();
    leader.add([entry('/ws/a-b/c', 'u1', 'a-b-c.svc.test')]);
    leader.add([entry('/ws/a/b-c', 'u2', 'a-b-c.svc.test')]);
    await publisher(leader);
    const table = new RouteTable();
    await follower(table);
    assert.equal(table.match('/', 'a-b-c.svc.test')?.entry.unit, 'u1');
    assert.equal(table.match('/ws/a/b-c')?.entry.unit, 'u2');
    assert.equal(table.hostOf('u2'), null);
  });

  it('keeps own entries over followed ones on a follower, and its add() evicts a followed entry', async () => {
    const leader = new RouteTable();
    leader.add([entry('/ws/a/x', 'leader-u1'), entry('/ws/b/x', 'leader-u2')]);
    await publisher(leader);
    const table = new RouteTable();
    table.add([entry('/ws/a/x', 'own-u1')]);
    await follower(table);
    assert.deepEqual(units(table), ['/ws/a/x=own-u1', '/ws/b/x=leader-u2']);
    assert.deepEqual(table.add([entry('/ws/b/x', 'own-u2')]), []);
    assert.deepEqual(units(table), ['/ws/a/x=own-u1', '/ws/b/x=own-u2']);
  });

  it('has a new leader reconcile: stale keys are deleted, unchanged ones left alone, and followers see it', async () => {
    const old = new RouteTable();
    old.add([entry('/ws/a/x', 'u1'), entry('/ws/b/x', 'u2')]);
    const first = await publisher(old);
    await first.close();
    const kept = await store.get(routeKey('/ws/a/x'));

    const table = new RouteTable();
    await follower(table);
    assert.deepEqual(units(table), ['/ws/a/x=u1', '/ws/b/x=u2']);

    const next = new RouteTable();
    next.add([entry('/ws/a/x', 'u1'), entry('/ws/c/x', 'u3')]);
    await publisher(next);
    assert.deepEqual(await store.keys(ROUTES_PREFIX), [routeKey('/ws/a/x'), routeKey('/ws/c/x')]);
    assert.equal((await store.get(routeKey('/ws/a/x')))?.modifyIndex, kept?.modifyIndex, 'an equal route is not written again');
    await until('the follower lost the stale route', () => units(table).join() === units(next).join(), 5000);
  });

  it("puts back, at its next audit, a route another replica wrote after it took over (a demoted leader's late write)", async () => {
    const table = new RouteTable();
    table.add([entry('/ws/a/x', 'u2')]);
    const made = new RoutePublisher({ store, routes: table, report, auditMs: 100 });
    closers.push(made);
    await made.start();
    // The old leader's last writes land after the new leader's reconcile.
    await store.put(routeKey('/ws/a/x'), encodeRoute({ entry: entry('/ws/a/x', 'u1'), servesHost: false }));
    await store.put(routeKey('/ws/z/x'), encodeRoute({ entry: entry('/ws/z/x', 'u9'), servesHost: false }));
    const copy = new RouteTable();
    await follower(copy);
    await until("the audit put the table's routes back and followers have them", () => units(copy).join() === '/ws/a/x=u2', 5000);
    assert.deepEqual(await store.keys(ROUTES_PREFIX), [routeKey('/ws/a/x')]);
    assert.deepEqual(reports, []);
  });

  it('reports and skips a stored route it cannot read, and applies the others', async () => {
    const leader = new RouteTable();
    leader.add([entry('/ws/a/x', 'u1')]);
    await publisher(leader);
    await store.put(routeKey('/ws/bad/x'), '{"version": 2}');
    const table = new RouteTable();
    const sync = await follower(table);
    assert.ok(sync.synced());
    assert.deepEqual(units(table), ['/ws/a/x=u1']);
    assert.equal(reports.length, 1);
    assert.ok(isCorrupt(/gateway\/routes\/ws\/bad\/x.*version/)(reports[0]), String(reports[0]));
  });

  it('retries after a failed write, with a full reconcile, and flush() waits for it', async () => {
    const flaky = new FlakyStore(store);
    const leader = new RouteTable();
    leader.add([entry('/ws/a/x', 'u1')]);
    const made = await publisher(leader, flaky, 50);
    flaky.failPuts = 1;
    leader.add([entry('/ws/b/x', 'u2')]);
    await made.flush();
    assert.equal(reports.length, 1);
    assert.ok(reports[0] instanceof SvcError && reports[0].code === 'state_unavailable');
    assert.deepEqual(await store.keys(ROUTES_PREFIX), [routeKey('/ws/a/x'), routeKey('/ws/b/x')]);
    assert.equal(flaky.puts, 3, 'one put for the start, a failed one and its retry');
  });

  it('coalesces the changes of one event-loop turn into one pass', async () => {
    const flaky = new FlakyStore(store);
    const leader = new RouteTable();
    const made = await publisher(leader, flaky);
    leader.add([entry('/ws/a/x', 'u1')]);
    leader.add([entry('/ws/b/x', 'u2')]);
    leader.removeUnit('u1');
    leader.add([entry('/ws/a/x', 'u3')]);
    await made.flush();
    assert.equal(flaky.puts, 2);
    const stored = await store.list(ROUTES_PREFIX);
    assert.deepEqual(
      stored.map((e) => decodeRoute(e.key, e.value.toString('utf8')).entry.unit),
      ['u3', 'u2'],
    );
  });

  it('rejects flush() and start() once closed', async () => {
    const made = new RoutePublisher({ store, routes: new RouteTable(), report });
    const started = assert.rejects(made.start(), (error: unknown) => error instanceof SvcError);
    await made.close();
    await started;
    await assert.rejects(made.flush(), (error: unknown) => error instanceof SvcError);
  });

  it('has a follower retry a failed load, and stop following once closed', async () => {
    const flaky = new FlakyStore(store);
    flaky.failLists = 1;
    const leader = new RouteTable();
    leader.add([entry('/ws/a/x', 'u1')]);
    const made = await publisher(leader);
    const table = new RouteTable();
    const sync = await follower(table, flaky);
    assert.equal(reports.length, 1);
    assert.deepEqual(units(table), ['/ws/a/x=u1']);

    await sync.close();
    leader.add([entry('/ws/b/x', 'u2')]);
    await made.flush();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(units(table), ['/ws/a/x=u1'], 'a closed follower keeps what it had and changes nothing');
  });
});

describe('gateway route codec', () => {
  const good = JSON.parse(
    encodeRoute({ entry: { ...entry('/ws/a/x', 'u1', 'a-x.svc.test'), offline: shuttingDownError(ref, 'x') }, servesHost: true }),
  ) as Record<string, any>;
  const key = routeKey('/ws/a/x');
  const broken = (change: (value: Record<string, any>) => void): string => {
    const value = structuredClone(good);
    change(value);
    return JSON.stringify(value);
  };

  it('decodes what it encodes', () => {
    const route = decodeRoute(key, JSON.stringify(good));
    assert.equal(route.servesHost, true);
    assert.equal(route.entry.host, 'a-x.svc.test');
    assert.deepEqual(route.entry.workload, endpoint());
    assert.deepEqual(route.entry.ref, ref);
    assert.equal(encodeRoute(route), JSON.stringify(good));
  });

  it('refuses values of another version or shape, naming the field', () => {
    assert.throws(() => decodeRoute(key, 'nope'), isCorrupt(/not valid JSON/));
    assert.throws(() => decodeRoute(key, '[]'), isCorrupt(/is not a JSON object/));
    assert.throws(
      () =>
        decodeRoute(
          key,
          broken((v) => (v.version = 2)),
        ),
      isCorrupt(/"version" 2/),
    );
    assert.throws(
      () =>
        decodeRoute(
          key,
          broken((v) => delete v.servesHost),
        ),
      isCorrupt(/"servesHost"/),
    );
    assert.throws(
      () =>
        decodeRoute(
          key,
          broken((v) => (v.entry.unit = 7)),
        ),
      isCorrupt(/"entry\.unit"/),
    );
    assert.throws(
      () =>
        decodeRoute(
          key,
          broken((v) => (v.entry.ref.stage = 'prod')),
        ),
      isCorrupt(/"entry\.ref\.stage"/),
    );
    assert.throws(
      () =>
        decodeRoute(
          key,
          broken((v) => (v.entry.workload = null)),
        ),
      isCorrupt(/"entry\.workload"/),
    );
    assert.throws(
      () =>
        decodeRoute(
          key,
          broken((v) => (v.entry.host = 1)),
        ),
      isCorrupt(/"entry\.host"/),
    );
    assert.throws(
      () =>
        decodeRoute(
          key,
          broken((v) => (v.entry.offline.code = 'nope')),
        ),
      isCorrupt(/"entry\.offline\.code"/),
    );
    assert.throws(
      () =>
        decodeRoute(
          key,
          broken((v) => (v.entry.offline.headers = { 'Retry-After': 5 })),
        ),
      isCorrupt(/"entry\.offline\.headers\.Retry-After"/),
    );
    assert.throws(() => decodeRoute(routeKey('/ws/b/x'), JSON.stringify(good)), isCorrupt(/"entry\.prefix"/));
  });
});
