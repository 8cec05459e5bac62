import assert from 'node:assert/strict';
import { SvcError } from '../../../core/errors.js';
import { Admission, type Slot } from '../../../core/gateway/admission.js';
import { createEmbeddedRegistry } from '../../../core/registry/embedded.js';
import type { Instance, ServiceRegistry } from '../../../core/registry/types.js';

const UNIT = 'default/app/deployed/w';
const instance = (id: string, capacity: number): Instance => ({ id, service: UNIT, address: { kind: 'unix', socketPath: `/tmp/${id}.sock` }, capacity, meta: {} });

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
    for (const [capacities, maxPending, burst] of [[[1], 3, 20], [[2, 3], 5, 50], [[4], 0, 9]] as const) {
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
