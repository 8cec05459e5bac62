/** CallRecords over a real (memory) state store: a record that cannot be read is skipped and reported, never the others' loss. */
import assert from 'node:assert/strict';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';
import { isSvcError } from '../../../../core/model/errors.js';
import { CallRecords } from '../../../../core/services/calls/call-records.js';
import type { CallRecord } from '../../../../core/services/calls/types.js';

describe('CallRecords', () => {
  it('lists the readable records of a prefix and reports each unreadable one (not JSON, not a call) instead of failing', async () => {
    const store = createMemoryStateStore();
    const reported: unknown[] = [];
    const records = new CallRecords(store, (error) => reported.push(error));
    const record: CallRecord = {
      id: 'call-0123456789abcdef0123',
      workspace: 'default',
      app: 'demo',
      function: 'square',
      target: { kind: 'deployed', app: 'demo' },
      encoding: 'pickle',
      status: 'queued',
      attempt: 0,
      maxAttempts: 1,
      createdAt: '2026-11-29T00:00:00.000Z',
      startedAt: null,
      endedAt: null,
      error: null,
      createdBy: null,
    };
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
