/**
 * The embedded state store on a real file system that fills up: a tmpfs of 1 MiB this test
 * mounts (it needs root, as CI has; elsewhere it says why it skips). A write the disk refuses is
 * `disk_full`, naming the log and the space left, and leaves the log as it was; once space is
 * freed the next write works in the same process, and every write acknowledged before is there
 * after a reopen.
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { openFileStateStore, type FileStateStore } from '../../../../core/infra/state/file-store.js';
import type { SvcError } from '../../../../core/model/errors.js';
import { mountTmpfs, type Tmpfs } from '../../../helpers/tmpfs.js';

describe('FileStateStore on a full disk (a tmpfs of 1 MiB)', function () {
  this.timeout(30_000);
  let disk: Tmpfs | null = null;
  let mountPoint: string;
  let store: FileStateStore | undefined;

  before(function () {
    disk = mountTmpfs('1m');
    if (disk === null) return this.skip();
    mountPoint = disk.dir;
  });
  after(async () => {
    await store?.close().catch(() => {});
    disk?.unmount();
  });

  it('refuses a write with disk_full while the disk is full, keeps what it acknowledged, and writes again once there is space', async () => {
    store = await openFileStateStore({ dataDir: mountPoint, compactAtBytes: 64 * 1024 * 1024 });
    // Most of the disk taken by something else: the store fills the rest.
    const filler = path.join(mountPoint, 'filler');
    writeFileSync(filler, Buffer.alloc(700 * 1024));
    const value = 'v'.repeat(24 * 1024);
    const acknowledged: string[] = [];
    let refusal: SvcError | undefined;
    for (let i = 0; i < 100 && refusal === undefined; i++) {
      try {
        await store.put(`k/${i}`, value);
        acknowledged.push(`k/${i}`);
      } catch (error) {
        refusal = error as SvcError;
      }
    }
    assert.ok(refusal !== undefined, 'the disk filled up');
    assert.ok(acknowledged.length > 0, 'some writes fit first');
    assert.equal(refusal.code, 'disk_full');
    const log = path.join(mountPoint, 'state', 'state.log');
    assert.match(refusal.message, new RegExp(`^the disk holding ${log} is full \\(\\d+(\\.\\d)? (B|KiB) free\\): the write was refused`));
    assert.equal((refusal.details as { path: string }).path, log);

    // Still full: refused again, and the store still reads and is not broken for good.
    await assert.rejects(store.put('k/again', value), (error: SvcError) => error.code === 'disk_full');
    for (const key of acknowledged) assert.equal((await store.get(key))?.value.toString(), value, key);
    assert.equal(await store.get('k/again'), null);

    rmSync(filler);
    await store.put('k/after', 'written once there was space');
    assert.equal((await store.get('k/after'))?.value.toString(), 'written once there was space');

    await store.close();
    store = await openFileStateStore({ dataDir: mountPoint });
    assert.deepEqual(store.warnings, [], 'the log holds whole records only: nothing to repair');
    for (const key of acknowledged) assert.equal((await store.get(key))?.value.toString(), value, key);
    assert.equal((await store.get('k/after'))?.value.toString(), 'written once there was space');
    assert.equal(await store.get('k/again'), null, 'a refused write is nowhere');
  });
});
