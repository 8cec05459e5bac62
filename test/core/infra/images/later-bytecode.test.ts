/** An image's bytecode compiled after its build (later-bytecode.ts), with the real compileall. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BYTECODE_MARKER, LaterBytecode } from '../../../../core/infra/images/later-bytecode.js';
import { tempDir } from '../../../helpers/config.js';

const python = process.env.SVC_PYTHON ?? 'python3';

/** Where Python looks for `file`'s bytecode. */
function pycOf(file: string): string {
  return execFileSync(python, ['-c', 'import importlib.util, sys; print(importlib.util.cache_from_source(sys.argv[1]))', file], {
    encoding: 'utf8',
  }).trim();
}

/** Whether a process whose command line holds `pattern` runs (pgrep leaves itself out). */
function running(pattern: string): boolean {
  try {
    execFileSync('pgrep', ['-f', pattern]);
    return true;
  } catch {
    return false;
  }
}

describe('LaterBytecode', () => {
  it('compiles what compiles, says it is done even when a file does not (it would fail to import anyway), and starts once', async () => {
    const image = tempDir('svc-image-');
    const site = path.join(image, 'site-packages');
    mkdirSync(path.join(site, 'pkg'), { recursive: true });
    writeFileSync(path.join(site, 'pkg', '__init__.py'), 'VALUE = 1\n');
    writeFileSync(path.join(site, 'pkg', 'py2_data.py'), 'print "python 2"\n');
    const said: string[] = [];
    const bytecode = new LaterBytecode();
    bytecode.start(image, python, site, (line) => said.push(line));
    bytecode.start(image, python, site, (line) => said.push(line)); // already compiling: nothing more
    await bytecode.settled();
    assert.ok(existsSync(pycOf(path.join(site, 'pkg', '__init__.py'))));
    assert.ok(LaterBytecode.complete(image), 'the marker is written');
    assert.deepEqual(said, []);
  });

  it('close() stops a compile in flight with its whole group, leaves no marker, and starts nothing after', async () => {
    const image = tempDir('svc-image-');
    // A stand-in interpreter that takes long, as compiling a large image does.
    const slow = path.join(image, 'slow-python');
    writeFileSync(slow, '#!/bin/sh\nsleep 31.25 &\nwait\n', { mode: 0o755 });
    const bytecode = new LaterBytecode();
    bytecode.start(image, slow, image, () => {});
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    await bytecode.close();
    assert.ok(Date.now() - started < 5_000, 'stopped, not waited for');
    assert.equal(existsSync(path.join(image, BYTECODE_MARKER)), false);
    assert.deepEqual([running(slow), running('sleep 31.25')], [false, false], 'nothing of its group is left');
    bytecode.start(image, slow, image, () => {});
    await bytecode.settled(); // nothing was started: resolves at once
  });
});
