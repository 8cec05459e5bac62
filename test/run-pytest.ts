/**
 * `npm run test:py`: runs the Python SDK's tests with pytest, in the tests'
 * own Python (test/python/env.ts). The runtime's serving tests need uvicorn,
 * which lives only in image environments, so this first builds (or finds in
 * the cache) the default runtime image with the real image builder and hands
 * its interpreter to pytest.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createVenvBuilder } from '../core/images/venv-builder.js';
import { packageRoot } from '../core/paths.js';
import { testCacheDir } from './helpers/config.js';
import { ensureTestPython } from './python/env.js';

const python = await ensureTestPython();
const version = execFileSync(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' }).trim();
const image = await createVenvBuilder({ cacheDir: testCacheDir, python }).build(
  { id: 'img-pytest', pythonVersion: version, pythonPackages: [] },
  (line) => process.stderr.write(`image | ${line}\n`),
);
const child = spawn(python, ['-m', 'pytest', '-q', 'sdk/python/tests', ...process.argv.slice(2)], {
  cwd: packageRoot,
  stdio: 'inherit',
  env: { ...process.env, SVC_PYTHON: python, SVC_TEST_RUNTIME_PYTHON: image.pythonPath },
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
