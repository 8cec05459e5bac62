/**
 * `npm run test:py`: runs the Python SDK's tests with pytest, in the tests'
 * own Python (test/python/env.ts). The runtime's serving tests need uvicorn,
 * which lives only in image environments, so this first builds (or finds in
 * the cache) the default runtime image with the real image builder and hands
 * its interpreter to pytest.
 *
 * Without arguments, the type check (test_types.py: mypy over the whole SDK;
 * pyright checks it in test/e2e/app-export-types.test.ts) runs in a second pytest at
 * the same time as the rest, which mostly waits on the processes it starts;
 * their output follows the rest's. With arguments (a file, `-k`…), one
 * pytest runs them as given.
 */
import type { StdioOptions } from 'node:child_process';
import { packageRoot } from '../core/model/paths.js';
import { runChild } from './helpers/run-child.js';
import { ensureTestPython } from './python/env.js';
import { ensureRuntimeLayer } from './python/runtime-layer.js';

const TESTS = 'sdk/python/tests';
const TYPE_CHECKS = `${TESTS}/test_types.py`;

const python = await ensureTestPython();
const image = await ensureRuntimeLayer(python);
const env = { ...process.env, SVC_PYTHON: python, SVC_TEST_RUNTIME_PYTHON: image.pythonPath };

/** Runs one pytest; resolves with its exit code and, when piped, what it printed. */
function pytest(args: readonly string[], stdio: StdioOptions) {
  return runChild(python, ['-m', 'pytest', '-q', ...args], { cwd: packageRoot, stdio, env });
}

const extra = process.argv.slice(2);
if (extra.length > 0) {
  process.exit((await pytest([TESTS, ...extra], 'inherit')).code);
}
// The type checks' pytest keeps out of .pytest_cache: the other one writes it.
const [rest, types] = await Promise.all([
  pytest([TESTS, `--ignore=${TYPE_CHECKS}`], 'inherit'),
  pytest(['-p', 'no:cacheprovider', TYPE_CHECKS], ['ignore', 'pipe', 'pipe']),
]);
process.stdout.write(`\n${TYPE_CHECKS} (run alongside):\n${types.output}`);
process.exit(rest.code !== 0 ? rest.code : types.code);
