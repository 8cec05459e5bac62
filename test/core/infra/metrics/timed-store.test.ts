/**
 * The state store that /metrics times: it forwards every call and keeps the wrapped store's
 * promise to order writes, so a spawn's input and record still go to disk in one batch.
 */
import assert from 'node:assert/strict';
import { PlatformMetrics } from '../../../../core/infra/metrics/platform-metrics.js';
import { timedStore } from '../../../../core/infra/metrics/timed-store.js';
import type { StateRecord } from '../../../../core/infra/state/image.js';
import { StateImage } from '../../../../core/infra/state/image.js';
import { KvStore } from '../../../../core/infra/state/kv-store.js';
import { CallRecords } from '../../../../core/services/calls/call-records.js';
import { queuedCallRecord } from '../../../helpers/call-record.js';

/** A KvStore whose persistence counts its batches (each one is an fsync in the file store). */
function countingStore(): { store: KvStore; batches: (readonly StateRecord[])[] } {
  const batches: (readonly StateRecord[])[] = [];
  const store = new KvStore(new StateImage(), {
    write: async (records) => {
      batches.push(records);
    },
    afterCommit: async () => {},
    close: async () => {},
  });
  return { store, batches };
}

const RECORD = queuedCallRecord();

describe('timedStore', () => {
  it('keeps the store ordering its writes, so a call and its input are written in one batch', async () => {
    const { store, batches } = countingStore();
    const metrics = new PlatformMetrics();
    const timed = timedStore(store, metrics);
    assert.equal(timed.ordersWrites, true);

    await new CallRecords(timed).create(RECORD, Buffer.from('input'));

    assert.equal(batches.length, 1, 'one batch (one fsync) for the input and the record');
    assert.deepEqual(
      batches[0]!.flatMap((record) => (record.kind === 'put' ? [record.key] : [])),
      [`call-inputs/default/${RECORD.id}`, `calls/default/${RECORD.id}`],
    );
    const text = await metrics.registry.getSingleMetricAsString('svc_state_store_duration_seconds');
    assert.match(text, /svc_state_store_duration_seconds_count\{operation="put",outcome="ok"\} 2/);
  });
});
