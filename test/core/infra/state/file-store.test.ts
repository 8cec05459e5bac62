import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import path from 'node:path';
import { openFileStateStore } from '../../../../core/infra/state/file-store.js';
import { describeStateStoreConformance } from './conformance.js';
import { tempDirs } from './temp-dirs.js';

const newDataDir = tempDirs();

describeStateStoreConformance('file store', () => openFileStateStore({ dataDir: newDataDir() }));

describe('openFileStateStore()', () => {
  it('creates <data dir>/state/state.log, private to the user', async () => {
    const dataDir = path.join(newDataDir(), 'nested', 'data');
    const store = await openFileStateStore({ dataDir });
    assert.equal(store.dir, path.join(dataDir, 'state'));
    assert.equal(statSync(path.join(store.dir, 'state.log')).mode & 0o777, 0o600);
    assert.equal(statSync(store.dir).mode & 0o777, 0o700);
    assert.deepEqual(store.warnings, []);
    await store.close();
  });

  it('keeps every key, value, index and the store index across close and reopen', async () => {
    const dataDir = newDataDir();
    const first = await openFileStateStore({ dataDir });
    await first.put('apps/a', 'one');
    await first.put('apps/a', Buffer.from([0, 1, 2, 255]));
    await first.put('apps/b', 'two');
    await first.put('tmp/x', 'gone soon');
    await first.deleteTree('tmp/');
    await first.put('doomed', 'x');
    await first.delete('doomed'); // the last write is a delete: the index must still come back
    const before = { entries: await first.list(''), index: await first.index() };
    await first.close();

    const second = await openFileStateStore({ dataDir });
    assert.deepEqual({ entries: await second.list(''), index: await second.index() }, before);
    assert.equal(await second.put('apps/c', 'three'), true);
    assert.equal((await second.get('apps/c'))?.modifyIndex, before.index + 1);
    await second.close();
  });

  it('compacts its log into the live state and reopens to the same state', async () => {
    const dataDir = newDataDir();
    const store = await openFileStateStore({ dataDir, compactAtBytes: 16 * 1024 });
    const log = path.join(store.dir, 'state.log');
    const value = 'x'.repeat(1000);
    let written = 0;
    for (let i = 0; i < 300; i++) {
      await store.put(`k/${i % 5}`, `${i}:${value}`);
      written += 1000;
    }
    await store.put('kept/a', 'a');
    await store.put('kept/b', 'b');
    await store.delete('kept/b');
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.put(`k/${i % 5}`, `${i}:${value}`)));
    const before = { entries: await store.list(''), index: await store.index() };
    await store.close();
    // 350 writes of 1 KB went in; the log holds roughly the 6 live keys.
    assert.ok(statSync(log).size < written / 4, `the log was compacted (${statSync(log).size} bytes)`);

    const reopened = await openFileStateStore({ dataDir });
    assert.deepEqual({ entries: await reopened.list(''), index: await reopened.index() }, before);
    await reopened.close();
  });

  it('compacts a long log left by an earlier run at the first write', async () => {
    const dataDir = newDataDir();
    const first = await openFileStateStore({ dataDir });
    for (let i = 0; i < 100; i++) await first.put('k', 'x'.repeat(1000));
    await first.close();
    const log = path.join(first.dir, 'state.log');
    const long = statSync(log).size;
    const second = await openFileStateStore({ dataDir, compactAtBytes: 16 * 1024 });
    await second.put('other', 'y');
    await second.close(); // compaction runs after the write is acknowledged; close waits for it
    assert.ok(statSync(log).size < long / 10, `${long} → ${statSync(log).size} bytes`);
  });

  it('batches concurrent writes and keeps their order per key', async () => {
    const dataDir = newDataDir();
    const store = await openFileStateStore({ dataDir });
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => store.put(`k/${i % 7}`, String(i))));
    assert.ok(results.every(Boolean));
    for (let k = 0; k < 7; k++) {
      const last = Math.max(...Array.from({ length: 200 }, (_, i) => i).filter((i) => i % 7 === k));
      assert.equal((await store.get(`k/${k}`))?.value.toString(), String(last));
    }
    await store.close();
    const reopened = await openFileStateStore({ dataDir });
    assert.equal((await reopened.keys('k/')).length, 7);
    await reopened.close();
  });
});
