import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createBundle } from '../../../../core/infra/bundles/create.js';
import { SvcError } from '../../../../core/model/errors.js';
import { loadManifest } from '../../../../core/infra/manifest-loader/load.js';
import { HelperUnavailable, WarmLoader, type ProjectRead } from '../../../../core/infra/manifest-loader/warm-loader.js';
import { examplesRoot } from '../../../../core/model/paths.js';
import { tempDir } from '../../../helpers/config.js';
import { pidsMatching } from '../../../helpers/processes.js';

const python = process.env.SVC_PYTHON ?? 'python3';

function changed(read: ProjectRead): Extract<ProjectRead, { unchanged: false }> {
  assert.equal(read.unchanged, false);
  return read as Extract<ProjectRead, { unchanged: false }>;
}

describe('WarmLoader', function () {
  this.timeout(60_000);
  let project: string;
  let file: string;
  let scratch: string;
  let loader: WarmLoader;

  beforeEach(() => {
    project = tempDir('svc-warm-');
    cpSync(path.join(examplesRoot, 'quickstart'), project, { recursive: true });
    file = path.join(project, 'app.py');
    scratch = tempDir('svc-warm-out-');
    loader = new WarmLoader({ python });
  });

  afterEach(() => {
    loader.close();
    rmSync(project, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  });

  const read = (unchanged: string | null, extra: { timeoutMs?: number; exclude?: string[] } = {}) =>
    loader.read({ target: file, unchanged, out: path.join(scratch, 'bundle.tar.gz'), ...extra });

  it('gives the manifest and the bundle that python -m svc.manifest and python -m svc.bundle give', async () => {
    const warm = changed(await read(null));
    const manifest = await loadManifest({ target: file, python });
    const bundle = await createBundle(project, { python, out: path.join(scratch, 'cold.tar.gz') });
    assert.deepEqual(warm.manifest.raw, manifest.raw);
    assert.deepEqual(warm.manifest.spec, manifest.spec);
    assert.equal(warm.manifest.root, project);
    assert.equal(warm.bundle.sha256, bundle.sha256, 'the same bundle, byte for byte');
    assert.equal(warm.bundle.files, bundle.files);
    assert.deepEqual(warm.dirs, []);
  });

  it('says unchanged for a touch or a save of the same bytes, and imports the new code after a real change', async () => {
    const first = changed(await read(null));
    writeFileSync(file, readFileSync(file, 'utf8'));
    const now = new Date();
    utimesSync(file, now, now);
    assert.deepEqual(await read(first.digest), { unchanged: true, digest: first.digest, dirs: [] });
    writeFileSync(file, readFileSync(file, 'utf8').replace('svc.App("quickstart")', 'svc.App("renamed")'));
    const second = changed(await read(first.digest));
    assert.equal(second.manifest.spec.name, 'renamed', 'a fresh import of the saved code');
    assert.notEqual(second.digest, first.digest);
    assert.notEqual(second.bundle.sha256, first.bundle.sha256);
  });

  it('fails a save that does not import with manifest_failed and the traceback, as loadManifest does', async () => {
    writeFileSync(file, `${readFileSync(file, 'utf8')}\ndef broken(:\n`);
    const warm = await read(null).then(
      () => assert.fail('the read should fail'),
      (error: unknown) => error,
    );
    const cold = await loadManifest({ target: file, python }).then(
      () => assert.fail('the load should fail'),
      (error: unknown) => error,
    );
    assert.ok(warm instanceof SvcError && cold instanceof SvcError);
    assert.equal(warm.code, 'manifest_failed');
    assert.equal(warm.message, cold.message);
    assert.match(warm.message, /SyntaxError/);
    assert.match(warm.message, /app\.py", line \d+/);
  });

  it('leaves editor temporaries and excluded folders out of the bundle, and lists the folders it holds', async () => {
    const clean = changed(await read(null));
    writeFileSync(path.join(project, '.app.py.swp'), 'vim swap');
    mkdirSync(path.join(project, 'state', 'bundles'), { recursive: true });
    writeFileSync(path.join(project, 'state', 'bundles', 'x.tar.gz'), 'svc data');
    mkdirSync(path.join(project, 'pkg'));
    const withPkg = changed(await read(clean.digest, { exclude: [path.join(project, 'state')] }));
    assert.deepEqual(withPkg.dirs, ['pkg']);
    rmSync(path.join(project, 'pkg'), { recursive: true });
    assert.equal((await read(clean.digest, { exclude: [path.join(project, 'state')] })).unchanged, true);
  });

  it('kills an import that does not finish in time, and answers the next read', async () => {
    const original = readFileSync(file, 'utf8');
    writeFileSync(file, `import time\ntime.sleep(60)\n${original}`);
    const error = await read(null, { timeoutMs: 1000 }).then(
      () => assert.fail('the read should fail'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof SvcError && error.code === 'manifest_failed', String(error));
    assert.match(error.message, /did not finish within 1 s/);
    writeFileSync(file, original);
    assert.equal(changed(await read(null)).manifest.spec.name, 'quickstart');
  });

  it('stops with close(): later reads reject with HelperUnavailable', async () => {
    changed(await read(null));
    const marker = `svc._dev --parent ${process.pid}`;
    assert.ok(pidsMatching(marker).length >= 1);
    loader.close();
    await assert.rejects(read(null), HelperUnavailable);
  });
});
