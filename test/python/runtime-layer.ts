/**
 * The image every test platform runs on unless its app adds packages: the
 * runtime layer of the tests' Python version (core/infra/images/venv-builder.ts),
 * in the shared test cache. Built here once, before the test files start;
 * otherwise each parallel mocha worker that needs it first builds its own
 * copy at the same time (pip, tens of seconds each), and a test's 60 s
 * before() can run out waiting on a cold cache.
 */
import { execFileSync } from 'node:child_process';
import { createVenvBuilder } from '../../core/infra/images/venv-builder.js';
import type { BuiltImage } from '../../core/infra/images/types.js';
import { testCacheDir } from '../helpers/config.js';

export async function ensureRuntimeLayer(
  python: string,
  log: (line: string) => void = (line) => process.stderr.write(`image | ${line}\n`),
): Promise<BuiltImage> {
  const version = execFileSync(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' }).trim();
  return createVenvBuilder({ cacheDir: testCacheDir, python }).build(
    { id: 'img-tests', pythonVersion: version, pythonPackages: [], requirementsFiles: [], env: {} },
    log,
  );
}
