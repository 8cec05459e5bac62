/**
 * The runtime the TypeScript exporter writes into every package (plugins/export-typescript/runtime/)
 * type-checks as it is in the repository: runtime.js under `tsc --strict` with checkJs (its JSDoc
 * types name runtime.d.ts's), on the platform it runs on (fetch, WebSocket, TextDecoder: the DOM
 * library), beside the errors.js and errors.d.ts the exporter writes, as in a package. runtime.d.ts
 * under the strict options of a careful project, with no DOM and no Node type: compile.test.ts, in
 * its one tsc run with the clients (this one needs the DOM library, so it runs on its own).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../../core/model/paths.js';
import { RUNTIME_FILES } from '../../../plugins/export-typescript/runtime-files.js';
import { tempDir } from '../../helpers/config.js';
import { tsc, writeRuntimePackage } from './ts-helpers.js';

const runtime = path.join(packageRoot, 'plugins', 'export-typescript', 'runtime');

describe('svc:export-typescript runtime files', function () {
  this.timeout(120_000);

  it('are the files the exporter writes, and nothing else', () => {
    assert.deepEqual(readdirSync(runtime).sort(), [...RUNTIME_FILES].sort());
  });

  it('ship with the package (package.json "files"): tsc copies no such file into dist/, the exporter reads them from here', () => {
    const files = (JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as { files: string[] }).files;
    assert.ok(files.includes(path.relative(packageRoot, runtime)), files.join(', '));
  });

  it('runtime.js passes tsc --strict with checkJs', () => {
    const dir = writeRuntimePackage(tempDir('svc-ts-runtime-'));
    const options = {
      strict: true,
      noUncheckedIndexedAccess: true,
      allowJs: true,
      checkJs: true,
      noEmit: true,
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2022', 'DOM', 'DOM.Iterable'],
      types: [],
    };
    const checked = tsc(dir, ['runtime.js'], options);
    assert.equal(checked.status, 0, checked.output);
  });
});
