/**
 * The real path: `python -m svc.bundle` writes the bundle, the store keeps
 * it, extraction gives back the project as it was (minus what is excluded).
 */
import assert from 'node:assert/strict';
import {
  cpSync,
  type Dirent,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { createBundle } from '../../../../core/infra/bundles/create.js';
import { extractBundle } from '../../../../core/infra/bundles/extract.js';
import { createCodeBundles } from '../../../../core/infra/bundles/service.js';
import { BundleStore } from '../../../../core/infra/bundles/store.js';
import { SvcError } from '../../../../core/model/errors.js';
import { packageRoot } from '../../../../core/model/paths.js';
import { tempDir } from '../../../helpers/config.js';

const python = process.env.SVC_PYTHON ?? 'python3';

/** Relative paths of the files under `dir`, sorted, without Python's caches. */
function filesUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as Dirent[])
    .filter((entry) => !entry.isDirectory())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .filter((name) => !name.split(path.sep).includes('__pycache__') && !name.endsWith('.pyc'))
    .sort();
}

function project(): string {
  const root = tempDir('svc-project-');
  mkdirSync(path.join(root, 'pkg', '__pycache__'), { recursive: true });
  mkdirSync(path.join(root, '.git'));
  writeFileSync(path.join(root, 'app.py'), 'import svc\napp = svc.App("demo")\n');
  writeFileSync(path.join(root, 'pkg', '__init__.py'), '');
  writeFileSync(path.join(root, 'pkg', '__pycache__', 'x.cpython-311.pyc'), 'junk');
  writeFileSync(path.join(root, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
  writeFileSync(path.join(root, 'notes.md'), 'private notes');
  writeFileSync(path.join(root, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(path.join(root, '.svcignore'), '# keep notes out\n*.md\n');
  symlinkSync('pkg/__init__.py', path.join(root, 'alias.py'));
  symlinkSync('/etc/hostname', path.join(root, 'host'));
  return root;
}

describe('createBundle() → BundleStore → extractBundle()', function () {
  this.timeout(60_000);

  it('round-trips a project: the same files, modes and inside links; exclusions and outside links left out', async () => {
    const root = project();
    const created = await createBundle(root, { python, out: path.join(tempDir(), 'b.tar.gz') });
    assert.equal(created.files, 5, 'app.py, pkg/__init__.py, run.sh, .svcignore, alias.py');
    assert.deepEqual(created.warnings, ['skipped link host -> /etc/hostname: it points outside the project']);
    const store = BundleStore.inDataDir(tempDir('svc-data-'));
    const stored = await store.put(created.path, created.sha256);
    assert.equal(stored.size, created.size);
    const dest = path.join(tempDir('svc-cache-'), 'code', stored.sha256);
    const result = await extractBundle(stored.path, dest);
    assert.equal(result.reused, false);
    assert.deepEqual(readdirSync(dest).sort(), ['.svcignore', 'alias.py', 'app.py', 'pkg', 'run.sh']);
    assert.deepEqual(readdirSync(path.join(dest, 'pkg')), ['__init__.py']);
    assert.equal(readFileSync(path.join(dest, 'app.py'), 'utf8'), readFileSync(path.join(root, 'app.py'), 'utf8'));
    assert.equal(statSync(path.join(dest, 'run.sh')).mode & 0o777, 0o755);
    assert.equal(readlinkSync(path.join(dest, 'alias.py')), 'pkg/__init__.py');
  });

  it('gives the same sha256 for the same files, and another when a file changes', async () => {
    const root = project();
    const first = await createBundle(root, { python, out: path.join(tempDir(), 'b.tar.gz') });
    const again = await createBundle(root, { python, out: path.join(tempDir(), 'b.tar.gz') });
    assert.equal(again.sha256, first.sha256);
    writeFileSync(path.join(root, 'app.py'), 'import svc\napp = svc.App("demo2")\n');
    const changed = await createBundle(root, { python, out: path.join(tempDir(), 'b.tar.gz') });
    assert.notEqual(changed.sha256, first.sha256);
  });

  it('answers bundle_too_large naming the biggest files', async () => {
    const root = project();
    writeFileSync(path.join(root, 'weights.bin'), Buffer.alloc(4096));
    await assert.rejects(createBundle(root, { python, out: path.join(tempDir(), 'b.tar.gz'), maxBytes: 2048 }), (error: unknown) => {
      assert.ok(error instanceof SvcError);
      assert.equal(error.code, 'bundle_too_large');
      assert.match(error.message, /more than the 2\.0 KiB a bundle may hold/);
      assert.match(error.message, /weights\.bin/);
      return true;
    });
  });

  it('answers bundle_failed for a folder that does not exist', async () => {
    await assert.rejects(createBundle(path.join(tempDir(), 'missing'), { python }), (error: unknown) => {
      assert.ok(error instanceof SvcError);
      assert.equal(error.code, 'bundle_failed');
      assert.match(error.message, /not a folder/);
      return true;
    });
  });

  it('answers python_unavailable when the interpreter is missing', async () => {
    await assert.rejects(
      createBundle(tempDir(), { python: 'python-does-not-exist' }),
      (error: unknown) => error instanceof SvcError && error.code === 'python_unavailable',
    );
  });
});

describe('createCodeBundles()#prepare()', function () {
  this.timeout(60_000);

  it('runs the test apps from <cacheDir>/code/<sha256>, extracted once and reused', async () => {
    const cacheDir = tempDir('svc-cache-');
    const bundles = createCodeBundles({ dataDir: tempDir('svc-data-'), cacheDir, python });
    const root = path.join(packageRoot, 'test', 'fixtures', 'apps');
    const first = await bundles.prepare({ root, entry: 'echo' });
    assert.equal(first.source.root, path.join(cacheDir, 'code', first.bundle.sha256));
    assert.equal(first.source.entry, 'echo');
    // The bundle of that folder is its files (other tests may add fixtures: compare with what is there).
    assert.deepEqual(filesUnder(first.source.root), filesUnder(root));
    assert.ok(filesUnder(root).includes('echo.py'));
    assert.equal(first.bundle.files, filesUnder(root).length);
    assert.ok(existsSync(bundles.store.pathOf(first.bundle.sha256)));
    const second = await bundles.prepare({ root, entry: 'echo' });
    assert.deepEqual(second, first);
    assert.deepEqual(readdirSync(path.join(cacheDir, 'code')), [first.bundle.sha256]);
  });

  it('keeps a running copy apart from later edits of the project', async () => {
    const root = tempDir('svc-project-');
    cpSync(path.join(packageRoot, 'test', 'fixtures', 'apps'), root, { recursive: true });
    const bundles = createCodeBundles({ dataDir: tempDir('svc-data-'), cacheDir: tempDir('svc-cache-'), python });
    const before = await bundles.prepare({ root, entry: 'echo' });
    writeFileSync(path.join(root, 'echo.py'), '# edited\n');
    const after = await bundles.prepare({ root, entry: 'echo' });
    assert.notEqual(after.bundle.sha256, before.bundle.sha256);
    assert.notEqual(readFileSync(path.join(before.source.root, 'echo.py'), 'utf8'), '# edited\n');
    assert.equal(readFileSync(path.join(after.source.root, 'echo.py'), 'utf8'), '# edited\n');
  });

  it('says so when .svcignore leaves out the module the app is imported from', async () => {
    const root = tempDir('svc-project-');
    writeFileSync(path.join(root, 'app.py'), 'x = 1\n');
    writeFileSync(path.join(root, '.svcignore'), 'app.py\n');
    const bundles = createCodeBundles({ dataDir: tempDir('svc-data-'), cacheDir: tempDir('svc-cache-'), python });
    await assert.rejects(bundles.prepare({ root, entry: 'app' }), (error: unknown) => {
      assert.ok(error instanceof SvcError);
      assert.equal(error.code, 'bundle_invalid');
      assert.match(error.message, /does not hold the module app: is it excluded by \.svcignore\?/);
      return true;
    });
  });
});
