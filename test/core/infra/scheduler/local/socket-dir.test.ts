import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { removeStaleSocketDirs } from '../../../../../core/infra/scheduler/local/socket-dir.js';

describe('socket folders of platforms that did not stop cleanly', () => {
  let base: string;
  beforeEach(() => (base = mkdtempSync(path.join(os.tmpdir(), 'svc-sockets-'))));
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it("removes a folder whose process is gone, and keeps a live process's and anything not named <pid>-…", () => {
    // A pid that surely ended: a child that already exited (waited for, so not reused by it).
    const ended = spawnSync(process.execPath, ['-e', '']).pid;
    assert.ok(ended);
    const stale = path.join(base, `${ended}-AbC123`);
    const live = path.join(base, `${process.pid}-XyZ789`);
    const other = path.join(base, 'notes');
    for (const folder of [stale, live, other]) mkdirSync(folder);
    writeFileSync(path.join(stale, 'c-1-w0.sock'), '');
    removeStaleSocketDirs(base);
    assert.equal(existsSync(stale), false, 'the ended process left its folder: removed');
    assert.equal(existsSync(live), true, 'this live process keeps its folder');
    assert.equal(existsSync(other), true, 'a folder not named <pid>-… is not touched');
  });

  it('does nothing when the base does not exist yet', () => {
    assert.doesNotThrow(() => removeStaleSocketDirs(path.join(base, 'absent')));
  });
});
