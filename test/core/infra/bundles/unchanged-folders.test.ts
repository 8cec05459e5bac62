/**
 * A project folder deployed again unchanged is not bundled again (core/infra/bundles/unchanged-folders.ts):
 * createCodeBundles() with a real `python -m svc.bundle` behind a wrapper that counts its runs.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createCodeBundles } from '../../../../core/infra/bundles/service.js';
import { tempDir } from '../../../helpers/config.js';

const python = process.env.SVC_PYTHON ?? 'python3';

/** A python that appends a line to `log` each time it runs, then is `python`. */
function countingPython(log: string): string {
  const wrapper = path.join(tempDir('svc-counting-python-'), 'python');
  writeFileSync(wrapper, `#!/bin/sh\necho run >> '${log}'\nexec '${python}' "$@"\n`);
  chmodSync(wrapper, 0o755);
  return wrapper;
}

const runs = (log: string) => readFileSync(log, 'utf8').split('\n').filter(Boolean).length;

/** A project whose files were last written more than two seconds ago (the racy window). */
async function settledProject(): Promise<string> {
  const root = tempDir('svc-unchanged-');
  mkdirSync(path.join(root, 'pkg'));
  writeFileSync(path.join(root, 'app.py'), 'import svc\napp = svc.App("unchanged")\n');
  writeFileSync(path.join(root, 'pkg', 'data.txt'), 'one\n');
  await new Promise((resolve) => setTimeout(resolve, 2_100));
  return root;
}

describe('createCodeBundles(): a folder bundled before and unchanged since', function () {
  this.timeout(60_000);
  const log = path.join(tempDir('svc-counting-'), 'runs.log');
  writeFileSync(log, '');
  const counting = countingPython(log);
  const bundles = (dataDir = tempDir('svc-data-')) => createCodeBundles({ dataDir, cacheDir: tempDir('svc-cache-'), python: counting });

  it('is not bundled again: the same bundle, from the store, without a Python run; another data dir copies it', async () => {
    const root = await settledProject();
    const first = bundles();
    const made = await first.prepare({ root, entry: 'app' });
    const again = await first.prepare({ root, entry: 'app' });
    assert.equal(runs(log), 1, 'one python -m svc.bundle');
    assert.equal(again.bundle?.sha256, made.bundle?.sha256);
    assert.equal(again.bundle?.files, made.bundle?.files);
    assert.equal(again.source.root, made.source.root);

    const other = bundles();
    const copied = await other.prepare({ root, entry: 'app' });
    assert.equal(runs(log), 1, 'still one: the other store took a copy');
    assert.equal(copied.bundle?.sha256, made.bundle?.sha256);
    assert.ok(await other.store.has(made.bundle!.sha256));
  });

  it('is bundled again once a file changes, even one of the same size whose modification time was set back', async () => {
    const root = await settledProject();
    const service = bundles();
    const before = runs(log);
    const made = await service.prepare({ root, entry: 'app' });
    const file = path.join(root, 'pkg', 'data.txt');
    const { atime, mtime } = statSync(file);
    writeFileSync(file, 'two\n');
    utimesSync(file, atime, mtime);
    // Past the racy window: only the change time (and the bytes) tell this file from the one bundled.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const changed = await service.prepare({ root, entry: 'app' });
    assert.equal(runs(log), before + 2);
    assert.notEqual(changed.bundle?.sha256, made.bundle?.sha256);
  });

  it('is bundled again when it was written in the last two seconds (a write in the same clock tick would not show)', async () => {
    const root = tempDir('svc-unchanged-fresh-');
    writeFileSync(path.join(root, 'app.py'), 'import svc\napp = svc.App("fresh")\n');
    const service = bundles();
    const before = runs(log);
    await service.prepare({ root, entry: 'app' });
    await service.prepare({ root, entry: 'app' });
    assert.equal(runs(log), before + 2);
  });
});
