/**
 * `npm test`'s test step: the mocha pool (run-mocha.ts, unit and e2e) and the Python SDK's pytest
 * (run-pytest.ts) at the same time. They share nothing but the machine, and the pool leaves about
 * a quarter of two cores idle while its files wait on the processes they start; pytest fills it.
 * Mocha prints as it goes; pytest's output follows once both are done. Fails if either does.
 */
import type { StdioOptions } from 'node:child_process';
import path from 'node:path';
import { packageRoot } from '../core/model/paths.js';
import { runChild } from './helpers/run-child.js';
import { ensureTestPython } from './python/env.js';
import { ensureRuntimeLayer } from './python/runtime-layer.js';

const run = (script: string, args: readonly string[], stdio: StdioOptions) =>
  runChild(process.execPath, [path.join(packageRoot, 'dist', 'test', script), ...args], { cwd: packageRoot, stdio });

// Both need the tests' Python and the runtime layer: made here once, before either starts, or in a
// fresh clone each builds the layer at the same time and one throws its copy away.
await ensureRuntimeLayer(await ensureTestPython());

const [mocha, pytest] = await Promise.all([
  run('run-mocha.js', ['unit', 'e2e'], 'inherit'),
  run('run-pytest.js', [], ['ignore', 'pipe', 'pipe']),
]);
process.stdout.write(`\nsdk/python/tests (pytest, run alongside the mocha pool):\n${pytest.output}`);
process.exit(mocha.code !== 0 ? mocha.code : pytest.code);
