import assert from 'node:assert/strict';
import { SvcError } from '../../../../core/model/errors.js';
import { Admission, type Slot, type UnitSupervisor } from '../../../../core/traffic/gateway/admission.js';
import { createEmbeddedRegistry } from '../../../../core/infra/registry/embedded.js';
import type { Instance, ServiceRegistry } from '../../../../core/infra/registry/types.js';

const UNIT = 'default/app/deployed/w';
const instance = (id: string, capacity: number): Instance => ({
  id,
  service: UNIT,
  address: { kind: 'unix', socketPath: `/tmp/${id}.sock` },
  capacity,
  meta: {},
});

async function setup(capacities: number[], options = {}): Promise<{ registry: ServiceRegistry; admission: Admission }> {
  const registry = createEmbeddedRegistry();
  for (const [i, capacity] of capacities.entries()) await registry.register(instance(`c${i}`, capacity));
  return { registry, admission: new Admission(registry, options) };
}

const codeOf = async (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => 'admitted',
    (error: unknown) => (error instanceof SvcError ? error.code : String(error)),
  );

describe('Admission#enter()', () => {
  it('admits exactly capacity + max_pending of a burst and answers 429 with Retry-After to the rest', async () => {
    for (const [capacities, maxPending, burst] of [
      [[1], 3, 20],
      [[2, 3], 5, 50],
      [[4], 0, 9],
    ] as const) {
      const { admission } = await setup([...capacities]);
      const signal = new AbortController().signal;
      const capacity = capacities.reduce((a, b) => a + b, 0);
      const errors: SvcError[] = [];
      for (let i = 0; i < burst; i++) {
        admission.enter(UNIT, { maxPending }, signal).catch((error: SvcError) => errors.push(error));
      }
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(errors.length, burst - capacity - maxPending, `capacity ${capacity}, max_pending ${maxPending}`);
      for (const error of errors) {
        assert.equal(error.code, 'queue_full');
        assert.equal(error.status, 429);
        assert.equal(error.headers['Retry-After'], '1');
      }
      assert.deepEqual(admission.load(UNIT), { inFlight: capacity, queued: maxPending });
      admission.close();
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(errors.length, burst - capacity, 'closing the gateway answers the queued requests');
    }
  });

  it('never gives an instance more than its capacity, and fills the emptiest first', async () => {
    const { admission } = await setup([1, 2]);
    const signal = new AbortController().signal;
    const slots = await Promise.all([1, 2, 3].map(() => admission.enter(UNIT, { maxPending: 0 }, signal)));
    assert.deepEqual(slots.map((s) => s.instance.id).sort(), ['c0', 'c1', 'c1']);
    assert.equal(await codeOf(admission.enter(UNIT, { maxPending: 0 }, signal)), 'queue_full');
    admission.close();
  });

  it('serves the queue in order as slots are released', async () => {
    const { admission } = await setup([1]);
    const signal = new AbortController().signal;
    const first = await admission.enter(UNIT, { maxPending: 5 }, signal);
    const order: number[] = [];
    const waiting = [1, 2, 3].map((n) => admission.enter(UNIT, { maxPending: 5 }, signal).then((slot) => (order.push(n), slot)));
    let held: Slot = first;
    for (const next of waiting) {
      held.release();
      held.release(); // twice is harmless
      held = await next;
    }
    assert.deepEqual(order, [1, 2, 3]);
    assert.deepEqual(admission.load(UNIT), { inFlight: 1, queued: 0 });
    admission.close();
  });

  it('takes a request whose client went away out of the queue, freeing its place', async () => {
    const { admission } = await setup([1]);
    const keep = new AbortController().signal;
    await admission.enter(UNIT, { maxPending: 1 }, keep);
    const leaving = new AbortController();
    const queued = admission.enter(UNIT, { maxPending: 1 }, leaving.signal);
    assert.equal(await codeOf(admission.enter(UNIT, { maxPending: 1 }, keep)), 'queue_full');
    leaving.abort();
    assert.equal(await codeOf(queued), 'client_closed');
    const next = admission.enter(UNIT, { maxPending: 1 }, keep);
    assert.equal(admission.load(UNIT).queued, 1, 'the freed place is taken by the next request');
    admission.close();
    assert.equal(await codeOf(next), 'no_capacity');
  });

  it('gives up after the wait timeout with 503 no_capacity', async () => {
    const { admission } = await setup([1], { waitTimeoutMs: 50 });
    const signal = new AbortController().signal;
    await admission.enter(UNIT, { maxPending: 1 }, signal);
    const started = Date.now();
    assert.equal(await codeOf(admission.enter(UNIT, { maxPending: 1 }, signal)), 'no_capacity');
    assert.ok(Date.now() - started >= 45);
    admission.close();
  });

  it('answers no_capacity at once when no container serves the unit', async () => {
    const { admission } = await setup([]);
    assert.equal(await codeOf(admission.enter(UNIT, { maxPending: 10 }, new AbortController().signal)), 'no_capacity');
    admission.close();
  });

  it('hands slots of a container that registers later to the waiting requests', async () => {
    const { registry, admission } = await setup([1]);
    const signal = new AbortController().signal;
    await admission.enter(UNIT, { maxPending: 2 }, signal);
    const waiting = admission.enter(UNIT, { maxPending: 2 }, signal);
    await registry.register(instance('late', 1));
    assert.equal((await waiting).instance.id, 'late');
    admission.close();
  });
});

/**
 * The autoscaler's side of the contract, recorded: the real one
 * (core/services/autoscale/controller.ts) runs against real containers in
 * test/core/services/autoscale/controller.test.ts and test/e2e/autoscale.test.ts.
 */
function recordingSupervisor(overrides: Partial<UnitSupervisor> = {}): UnitSupervisor & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    manages: () => true,
    queued: (unit) => void calls.push(`queued ${unit}`),
    refused: (unit) => void calls.push(`refused ${unit}`),
    refusal: () => null,
    waitError: (_unit, waitedMs) => new SvcError('starting', `still starting after ${waitedMs} ms`),
    ...overrides,
  };
}

describe('Admission with an autoscaler (supervised units)', () => {
  it('queues requests to a unit with no container, exactly up to max_pending_tasks, and gives them the slots of containers as they register', async () => {
    const { registry, admission } = await setup([]);
    const supervisor = recordingSupervisor();
    admission.supervise(supervisor);
    const signal = new AbortController().signal;
    const outcomes = Array.from({ length: 10 }, () => codeOf(admission.enter(UNIT, { maxPending: 3 }, signal)));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(admission.load(UNIT), { inFlight: 0, queued: 3 }, 'starting containers are no capacity: only max_pending_tasks wait');
    assert.deepEqual(supervisor.calls, [`queued ${UNIT}`, `queued ${UNIT}`, `queued ${UNIT}`], 'each queued request tells the autoscaler');
    await registry.register(instance('c-new', 2));
    assert.deepEqual(admission.load(UNIT), { inFlight: 2, queued: 1 });
    await registry.register(instance('c-other', 1));
    assert.deepEqual(await Promise.all(outcomes), [...Array(3).fill('admitted'), ...Array(7).fill('queue_full')]);
    admission.close();
  });

  it("refuses at once with the autoscaler's refusal (a crash loop) while the unit has no container, and reports the demand", async () => {
    const { admission } = await setup([]);
    const supervisor = recordingSupervisor({ refusal: () => new SvcError('crash_loop', 'exited 3 times in a row') });
    admission.supervise(supervisor);
    assert.equal(await codeOf(admission.enter(UNIT, { maxPending: 5 }, new AbortController().signal)), 'crash_loop');
    assert.deepEqual(supervisor.calls, [`refused ${UNIT}`]);
    assert.equal(admission.load(UNIT).queued, 0);
    admission.close();
  });

  it("answers a request that waited the whole timeout with the autoscaler's reason", async () => {
    const { admission } = await setup([], { waitTimeoutMs: 30 });
    admission.supervise(recordingSupervisor());
    await assert.rejects(admission.enter(UNIT, { maxPending: 1 }, new AbortController().signal), /still starting after 30 ms/);
    admission.close();
  });

  it("with max_pending_tasks 0 and no container, refuses with the autoscaler's wait error and reports the demand", async () => {
    const { admission } = await setup([]);
    const supervisor = recordingSupervisor();
    admission.supervise(supervisor);
    assert.equal(await codeOf(admission.enter(UNIT, { maxPending: 0 }, new AbortController().signal)), 'starting');
    assert.deepEqual(supervisor.calls, [`refused ${UNIT}`]);
    admission.close();
  });

  it('rejectQueued() answers every waiting request at once', async () => {
    const { admission } = await setup([]);
    admission.supervise(recordingSupervisor());
    const signal = new AbortController().signal;
    const waiting = [1, 2].map(() => codeOf(admission.enter(UNIT, { maxPending: 5 }, signal)));
    admission.rejectQueued(UNIT, new SvcError('crash_loop', 'exited 3 times in a row'));
    assert.deepEqual(await Promise.all(waiting), ['crash_loop', 'crash_loop']);
    assert.deepEqual(admission.load(UNIT), { inFlight: 0, queued: 0 });
    admission.close();
  });

  it('detaching the autoscaler restores the immediate no_capacity', async () => {
    const { admission } = await setup([]);
    const detach = admission.supervise(recordingSupervisor());
    detach();
    assert.equal(await codeOf(admission.enter(UNIT, { maxPending: 5 }, new AbortController().signal)), 'no_capacity');
    admission.close();
  });
});

describe('Admission#drain()', () => {
  it('takes no new request on a draining instance from the call on, and resolves once its requests finished', async () => {
    const { registry, admission } = await setup([2]);
    const signal = new AbortController().signal;
    const held = await admission.enter(UNIT, { maxPending: 5 }, signal);
    let drained = false;
    const draining = admission.drain(['c0']).then(() => (drained = true));
    assert.equal(admission.use('c0').draining, true);
    assert.equal(await codeOf(admission.enter(UNIT, { maxPending: 5 }, signal)), 'no_capacity', 'its free slot is not offered any more');
    await registry.register(instance('c1', 1));
    assert.equal((await admission.enter(UNIT, { maxPending: 5 }, signal)).instance.id, 'c1');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(drained, false, 'a request is still in flight on it');
    held.release();
    await draining;
    assert.equal(admission.use('c0').inFlight, 0);
    admission.close();
  });

  it('resolves at once for idle instances, and forget() drops them', async () => {
    const { admission } = await setup([1]);
    await admission.drain(['c0', 'never-registered']);
    admission.forget(['c0', 'never-registered']);
    assert.deepEqual(admission.use('c0'), { inFlight: 0, lastActiveAt: undefined, draining: false });
    admission.close();
  });

  it('records when an instance last took or gave back a slot', async () => {
    const { admission } = await setup([1]);
    const before = Date.now();
    const slot = await admission.enter(UNIT, { maxPending: 0 }, new AbortController().signal);
    assert.ok((admission.use('c0').lastActiveAt ?? 0) >= before);
    assert.equal(admission.use('c0').inFlight, 1);
    slot.release();
    assert.equal(admission.use('c0').inFlight, 0);
    assert.ok((admission.use('c0').lastActiveAt ?? 0) >= before);
    admission.close();
  });
});
