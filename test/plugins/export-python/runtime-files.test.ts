/**
 * The runtime the Python exporter writes into every package (plugins/export-python/runtime/)
 * type-checks as it is in the repository, under mypy --strict and pyright strict, with the SDK
 * and nothing else installed: a type error in it fails here, before any client is exported.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../../core/model/paths.js';
import { RUNTIME_FILES } from '../../../plugins/export-python/runtime-files.js';
import { tempDir } from '../../helpers/config.js';
import { bareInterpreter, CLIENT_MYPY_CONFIG, CLIENT_MYPYPATH, python, runPyright, writeClientPyrightConfig } from './python-helpers.js';

const plugin = path.join(packageRoot, 'plugins', 'export-python');
const runtime = path.join(plugin, 'runtime');

describe('svc:export-python runtime files', function () {
  this.timeout(300_000);

  it('are the modules the exporter writes, and nothing else', () => {
    assert.deepEqual(
      readdirSync(runtime)
        .filter((name) => name.endsWith('.py'))
        .sort(),
      [...RUNTIME_FILES].sort(),
    );
  });

  it('ship with the package (package.json "files"): tsc copies no such file into dist/, the exporter reads them from here', () => {
    const files = (JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as { files: string[] }).files;
    assert.ok(files.includes(path.relative(packageRoot, runtime)), files.join(', '));
  });

  it('pass mypy --strict (checked in place, as the namespace package runtime)', () => {
    const config = path.join(tempDir('svc-runtime-mypy-'), 'mypy.ini');
    writeFileSync(config, CLIENT_MYPY_CONFIG);
    const args = [
      '-m',
      'mypy',
      '--config-file',
      config,
      '--cache-dir',
      path.join(path.dirname(config), '.mypy_cache'),
      '--python-executable',
      bareInterpreter(),
      '-p',
      'runtime',
    ];
    const checked = spawnSync(python, args, { cwd: plugin, encoding: 'utf8', env: { ...process.env, MYPYPATH: CLIENT_MYPYPATH } });
    assert.equal(checked.status, 0, checked.stdout + checked.stderr);
    assert.match(checked.stdout, /^Success: no issues found in \d+ source files/m);
  });

  it('pass pyright strict (checked in place)', async () => {
    const dir = tempDir('svc-runtime-pyright-');
    writeClientPyrightConfig(dir, [runtime]);
    const checked = await runPyright(dir, bareInterpreter());
    assert.equal(checked.code, 0, checked.stdout + checked.stderr);
    assert.match(checked.stdout, /^0 errors, 0 warnings, 0 informations/m);
  });
});
