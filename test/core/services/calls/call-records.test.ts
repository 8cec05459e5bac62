/** CallRecords over a real (memory) state store: a record that cannot be read is skipped and reported, never the others' loss. */
import assert from 'node:assert/strict';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';
import { isSvcError } from '../../../../core/model/errors.js';
import { CallRecords } from '../../../../core/services/calls/call-records.js';
import { queuedCallRecord } from '../../../helpers/call-record.js';

describe('CallRecords', () => {
  it('lists the readable records of a prefix and reports each unreadable one (not JSON, not a call) instead of failing', async () => {
    const store = createMemoryStateStore();
    const reported: unknown[] = [];
    const records = new CallRecords(store, (error) => reported.push(error));
    const record = queuedCallRecord();
    await records.create(record, Buffer.from('input'));
    await store.put('calls/default/call-broken-json', '{not json');
    await store.put('calls/default/call-not-a-call', '{"hello": 1}');

    assert.deepEqual(
      (await records.all()).map((entry) => entry.value.id),
      [record.id],
    );
    assert.deepEqual(
      (await records.ofWorkspace('default')).map((entry) => entry.value.id),
      [record.id],
    );
    assert.equal(reported.length, 4, 'each unreadable record, once per listing');
    assert.ok(reported.every((error) => isSvcError(error) && error.code === 'state_corrupt'));
    assert.deepEqual((await records.input('default', record.id))?.toString(), 'input');
  });
});
