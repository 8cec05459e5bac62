/**
 * The write pipeline shared by every embedded store: group commit and what
 * happens when the disk refuses a write. The persistence here is a stand-in
 * that counts or fails writes; the file store's own tests use real files.
 */
import assert from 'node:assert/strict';
import { StateImage, type StateRecord } from '../../../../core/infra/state/image.js';
import { KvStore, type Persistence } from '../../../../core/infra/state/kv-store.js';
import { assertCode } from './conformance.js';

function persistence(write: (records: readonly StateRecord[]) => Promise<void>): Persistence {
  return { write, afterCommit: async () => {}, close: async () => {} };
}

describe('KvStore', () => {
  it('makes writes that queue while one is being synced durable together (group commit)', async () => {
    const batches: number[] = [];
    const store = new KvStore(
      new StateImage(),
      persistence(async (records) => {
        batches.push(records.length);
        await new Promise((resolve) => setImmediate(resolve));
      }),
    );
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => store.put(`k/${i}`, 'v')));
    assert.ok(results.every(Boolean));
    assert.equal(
      batches.reduce((a, b) => a + b, 0),
      100,
    );
    assert.ok(batches.length <= 2, `100 concurrent writes took ${batches.length} syncs`);
    await store.close();
  });

  it('publishes a write to readers only once it is durable', async () => {
    let release!: () => void;
    const store = new KvStore(
      new StateImage(),
      persistence(
        () =>
          new Promise<void>((resolve) => {
            release = resolve;
          }),
      ),
    );
    const writing = store.put('k', 'v');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(await store.get('k'), null, 'not readable while its sync is pending');
    release();
    assert.equal(await writing, true);
    assert.equal((await store.get('k'))?.value.toString(), 'v');
    await store.close();
  });

  it('after a failed write refuses every write with state_unavailable and keeps serving reads', async () => {
    let fail = false;
    const store = new KvStore(
      new StateImage(),
      persistence(async () => {
        if (fail) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      }),
    );
    await store.put('kept', 'v');
    fail = true;
    const error = await assertCode(store.put('lost', 'v'), 'state_unavailable');
    assert.match(error.message, /no space left on device/);
    fail = false;
    await assertCode(store.put('later', 'v'), 'state_unavailable');
    assert.equal((await store.get('kept'))?.value.toString(), 'v');
    assert.equal(await store.get('lost'), null);
    await store.close();
  });

  it('writes nothing for a failed compare-and-set or a delete of an absent key', async () => {
    let writes = 0;
    const store = new KvStore(
      new StateImage(),
      persistence(async () => {
        writes += 1;
      }),
    );
    await store.put('k', 'v', { cas: 0 });
    assert.equal(await store.put('k', 'v', { cas: 0 }), false);
    assert.equal(await store.delete('absent'), true);
    await store.deleteTree('nothing/');
    assert.equal(writes, 1);
    await store.close();
  });
});
