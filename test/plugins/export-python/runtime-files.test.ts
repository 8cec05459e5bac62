/**
 * The runtime the Python exporter writes into every package (plugins/export-python/runtime/):
 * the files the exporter reads, shipped with the package. That it type-checks as it is in the
 * repository, under mypy --strict and pyright strict: test/e2e/app-export-types.test.ts, in one run of each
 * checker with the clients exported from the fixtures.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../../core/model/paths.js';
import { RUNTIME_FILES } from '../../../plugins/export-python/runtime-files.js';

const runtime = path.join(packageRoot, 'plugins', 'export-python', 'runtime');

describe('svc:export-python runtime files', () => {
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
});
