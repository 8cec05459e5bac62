/** A follower's LoadReporter against a memory store, with a real Admission and the embedded registry. */
import assert from 'node:assert/strict';
import { LOAD_PREFIX, type LoadRecord } from '../../../../core/traffic/cluster/load-record.js';
import { LoadReporter, type LoadReporterOptions } from '../../../../core/traffic/cluster/load-report.js';
import { Admission } from '../../../../core/traffic/gateway/admission.js';
import { createEmbeddedRegistry } from '../../../../core/infra/registry/embedded.js';
import type { Instance, ServiceRegistry } from '../../../../core/infra/registry/types.js';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';
import type { StateEntry, StateStore } from '../../../../core/model/store/types.js';
import { until } from '../../../helpers/until.js';

const UNIT = 'default/app/deployed/w';
const IDLE_UNIT = 'default/app/deployed/idle';
const KEY = `${LOAD_PREFIX}replica-b`;
const instance = (id: string): Instance => ({
  id,
  service: UNIT,
  address: { kind: 'unix', socketPath: `/tmp/${id}.sock` },
  capacity: 1,
  meta: {},
});
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const decode = (entry: StateEntry): LoadRecord => JSON.parse(entry.value.toString('utf8')) as LoadRecord;

/** The waits for a write: 1 s at most, a read every 10 ms. */
const POLL = { timeoutMs: 1_000, intervalMs: 10 };

describe('LoadReporter', () => {
  let store: StateStore;
  let registry: ServiceRegistry;
  let admission: Admission;
  let reporter: LoadReporter | undefined;
  let reports: unknown[];

  beforeEach(async () => {
    store = createMemoryStateStore();
    registry = createEmbeddedRegistry();
    await registry.register(instance('c1'));
    admission = new Admission(registry);
    reports = [];
  });
  afterEach(async () => {
    await reporter?.close();
    reporter = undefined;
    admission.close();
    await store.close();
    assert.deepEqual(reports, []);
  });

  function start(options: Partial<LoadReporterOptions> = {}): LoadReporter {
    reporter = new LoadReporter({
      store,
      replicaId: 'replica-b',
      admission,
      registry,
      units: () => [UNIT, IDLE_UNIT],
      report: (error) => reports.push(error),
      ...options,
    });
    return reporter;
  }
  const enter = () => admission.enter(UNIT, { maxPending: 5 }, new AbortController().signal);
  const stored = () => store.get(KEY);
  /** The stored record once it exists and `ok` holds for it. */
  const storedWhen = (what: string, ok: (entry: StateEntry) => boolean = () => true) =>
    until(
      what,
      async () => {
        const entry = await stored();
        return entry !== null && ok(entry) ? entry : undefined;
      },
      POLL,
    );

  it('writes soon after a notice, listing only units and instances with something to say', async () => {
    const reporter = start({ intervalMs: 60_000 }); // no tick during the test: the notice writes
    const first = await enter();
    const queued = enter();
    const noticedAt = Date.now();
    reporter.notice(UNIT);
    const entry = await storedWhen('the record is written');
    assert.ok(Date.now() - noticedAt < 200, 'soon');
    const { version, units } = decode(entry);
    assert.equal(version, 1);
    assert.deepEqual(Object.keys(units), [UNIT], 'the idle unit says nothing');
    assert.equal(units[UNIT]!.queued, 1);
    assert.equal(units[UNIT]!.instances.c1!.inFlight, 1);
    const { idleMs } = units[UNIT]!.instances.c1!;
    assert.ok(idleMs !== null && idleMs >= 0 && idleMs < 1_000, `idleMs ${idleMs}`);
    first.release();
    (await queued).release();
  });

  it('rewrites the record while busy, writes the zeros once more, then nothing until something changes', async () => {
    start({ intervalMs: 30 });
    const slot = await enter();
    const first = await storedWhen('the first write');
    await storedWhen('a heartbeat rewrites the unchanged record', (e) => e.modifyIndex > first.modifyIndex);

    slot.release();
    const final = await storedWhen('the zeros are written', (e) => decode(e).units[UNIT]!.instances.c1!.inFlight === 0);
    const { queued, instances } = decode(final).units[UNIT]!;
    assert.equal(queued, 0);
    assert.notEqual(instances.c1!.idleMs, null, 'it was used: its idle time stays listed');
    await wait(200);
    assert.equal((await stored())!.modifyIndex, final.modifyIndex, 'idle and unchanged: no write');

    (await enter()).release();
    await storedWhen('a new last use is written', (e) => e.modifyIndex > final.modifyIndex);
  });

  it('writes nothing while idle, and idle durations by its clock', async () => {
    start({ intervalMs: 20, now: () => Date.now() + 10_000 });
    await wait(100);
    assert.equal(await stored(), null, 'nothing to say');
    (await enter()).release();
    const entry = await storedWhen('the use is written');
    const { inFlight, idleMs } = decode(entry).units[UNIT]!.instances.c1!;
    assert.equal(inFlight, 0);
    assert.ok(idleMs !== null && idleMs >= 10_000 && idleMs < 11_000, `idleMs ${idleMs}`);
  });

  it('reports a request refused at zero containers (max_pending_tasks 0) as one queued request for 5 s, so the leader starts one', async () => {
    let clock = Date.now();
    const reporter = start({ intervalMs: 60_000, now: () => clock });
    reporter.notice(IDLE_UNIT, true);
    const record = decode(await storedWhen('the record is written'));
    assert.deepEqual(record.units[IDLE_UNIT], { queued: 1, instances: {} });
    clock += 5_000;
    reporter.notice(IDLE_UNIT);
    await storedWhen('the demand ends after 5 s', (entry) => decode(entry).units[IDLE_UNIT] === undefined);
  });

  it('deletes its record on close and writes no more', async () => {
    const reporter = start({ intervalMs: 20 });
    const slot = await enter();
    await storedWhen('the record is written');
    await reporter.close();
    assert.equal(await stored(), null);
    await wait(100);
    assert.equal(await stored(), null, 'no tick after close');
    slot.release();
  });
});
