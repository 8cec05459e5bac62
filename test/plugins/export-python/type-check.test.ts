/**
 * mypy --strict and pyright strict over everything the Python exporter's unit tests make, with
 * the SDK and nothing else installed: the runtime as it is in the repository
 * (plugins/export-python/runtime, checked in place) and the clients exported from the fixtures
 * (quickstart; kitchen-sink, every kind and return shape; todos, the ASGI operations of
 * operations-app.ts), written into one folder. Each checker runs once over all of them: a cold
 * run spends most of its time on the standard library and the SDK, which every target shares.
 * A type error in the runtime or in any client fails here, with the checker's output.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { AppInterface } from '../../../core/infra/plugin/types.js';
import { packageRoot } from '../../../core/model/paths.js';
import { pythonExporter } from '../../../plugins/export-python/index.js';
import { RUNTIME_FILES } from '../../../plugins/export-python/runtime-files.js';
import { tempDir } from '../../helpers/config.js';
import { OPERATIONS_APP } from './operations-app.js';
import {
  bareInterpreter,
  CLIENT_MYPY_CONFIG,
  CLIENT_MYPYPATH,
  python,
  runPyright,
  writeClientPyrightConfig,
  writeFiles,
} from './python-helpers.js';

const plugin = path.join(packageRoot, 'plugins', 'export-python');
const runtime = path.join(plugin, 'runtime');
const fixtures = path.join(packageRoot, 'test', 'fixtures', 'export');
const iface = (name: string): AppInterface => JSON.parse(readFileSync(path.join(fixtures, `${name}.interface.json`), 'utf8'));
const APPS = () => [iface('quickstart'), iface('kitchen-sink'), OPERATIONS_APP];

describe('svc:export-python: the runtime and the clients exported from the fixtures type-check (one run of each checker)', function () {
  this.timeout(300_000);
  const out = tempDir('svc-export-typecheck-');
  let bare: string;

  before(() => {
    for (const app of APPS()) writeFiles(out, pythonExporter.export(app, {}));
    bare = bareInterpreter();
  });

  it('mypy --strict finds nothing in the runtime (checked in place, as the namespace package runtime), nor in the clients of quickstart, kitchen-sink and todos (ASGI operations), nor in the SDK they import', () => {
    assert.deepEqual(readdirSync(path.join(out, 'svc_clients')).sort(), ['__init__.py', 'kitchen_sink', 'quickstart', 'todos']);
    writeFileSync(path.join(out, 'mypy.ini'), CLIENT_MYPY_CONFIG);
    const args = [
      '--config-file',
      'mypy.ini',
      '--cache-dir',
      '.mypy_cache',
      '--python-executable',
      bare,
      '-p',
      'svc_clients',
      '-p',
      'runtime',
    ];
    // The runtime's folder on MYPYPATH: `-p runtime` finds it in place; the clients are in the working folder.
    const mypyPath = [CLIENT_MYPYPATH, plugin].join(path.delimiter);
    const checked = spawnSync(python, ['-m', 'mypy', ...args], { cwd: out, encoding: 'utf8', env: { ...process.env, MYPYPATH: mypyPath } });
    assert.equal(checked.status, 0, checked.stdout + checked.stderr);
    // Every client module and every runtime module was a source of this run (mypy counts the namespace package runtime too).
    const clients = readdirSync(path.join(out, 'svc_clients'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.py'));
    const sources = clients.length + RUNTIME_FILES.length + 1;
    assert.match(checked.stdout, new RegExp(`^Success: no issues found in ${sources} source files`, 'm'));
  });

  it('pyright strict finds nothing in the same runtime (checked in place) and clients (one run over all of them)', async () => {
    writeClientPyrightConfig(out, ['svc_clients', runtime]);
    const checked = await runPyright(out, bare);
    assert.equal(checked.code, 0, checked.stdout + checked.stderr);
    assert.match(checked.stdout, /^0 errors, 0 warnings, 0 informations/m);
  });
});
