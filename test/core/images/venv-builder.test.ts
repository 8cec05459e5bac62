import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { SvcError } from '../../../core/errors.js';
import { createVenvBuilder } from '../../../core/images/venv-builder.js';
import { tempDir, testCacheDir } from '../../helpers/config.js';

const python = process.env.SVC_PYTHON ?? 'python3';
const version = execFileSync(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' }).trim();

describe('createVenvBuilder()#build()', function () {
  this.timeout(180_000);

  it('builds an environment that runs the container runtime, then finds it in the cache', async () => {
    const builder = createVenvBuilder({ cacheDir: testCacheDir, python });
    const spec = { id: 'img-test', pythonVersion: version, pythonPackages: [] };
    const first = await builder.build(spec, () => {});
    const output = execFileSync(first.pythonPath, ['-c', 'import uvicorn, httptools, uvloop, websockets; print("ok")'], { encoding: 'utf8' });
    assert.equal(output.trim(), 'ok');
    const again = await builder.build(spec, () => {});
    assert.equal(again.cached, true);
    assert.equal(again.path, first.path);
    assert.equal(again.imageId, 'img-test');
  });

  it('answers python_unavailable, naming what it found, for a Python version that is not installed', async () => {
    const builder = createVenvBuilder({ cacheDir: tempDir(), python });
    await assert.rejects(builder.build({ id: 'img-x', pythonVersion: '3.99', pythonPackages: [] }, () => {}), (error: unknown) => {
      assert.ok(error instanceof SvcError);
      assert.equal(error.code, 'python_unavailable');
      assert.match(error.message, /Python 3\.99 is not installed/);
      assert.match(error.message, new RegExp(`is ${version.replace('.', '\\.')}`));
      return true;
    });
  });

  it('reports a failed pip install with its last lines, keeps nothing half-built and sweeps abandoned builds', async () => {
    const cacheDir = tempDir();
    const abandoned = path.join(cacheDir, 'images', '.venv-0123abcd.999999999.deadbeef');
    mkdirSync(abandoned, { recursive: true });
    const builder = createVenvBuilder({ cacheDir, python });
    const lines: string[] = [];
    await assert.rejects(builder.build({ id: 'img-bad', pythonVersion: version, pythonPackages: ['not a valid requirement !!'] }, (line) => lines.push(line)), (error: unknown) => {
      assert.ok(error instanceof SvcError);
      assert.equal(error.code, 'image_build_failed');
      assert.match(error.message, /exited with code/);
      assert.match(error.message, /not a valid requirement|Invalid requirement/i);
      return true;
    });
    assert.ok(lines.length > 0, 'the build log was streamed');
    assert.equal(existsSync(abandoned), false, 'the abandoned build of a dead process was removed');
    assert.deepEqual(readdirSync(path.join(cacheDir, 'images')), [], 'no half-built environment stays behind');
  });
});
