/**
 * The runtime the TypeScript exporter writes into every package (plugins/export-typescript/runtime/)
 * type-checks as it is in the repository: runtime.js under `tsc --strict` with checkJs (its JSDoc
 * types name runtime.d.ts's), on the platform it runs on (fetch, WebSocket, TextDecoder: the DOM
 * library); runtime.d.ts under the strict options of a careful project, with no DOM and no Node
 * type. Both sit beside the errors.js and errors.d.ts the exporter writes, as in a package.
 */
import assert from 'node:assert/strict';
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../../core/model/paths.js';
import { errorsDts, errorsJs } from '../../../plugins/export-typescript/errors.js';
import { RUNTIME_FILES } from '../../../plugins/export-typescript/runtime-files.js';
import { tempDir } from '../../helpers/config.js';
import { STRICT_OPTIONS, tsc } from './ts-helpers.js';

const runtime = path.join(packageRoot, 'plugins', 'export-typescript', 'runtime');

/** A folder holding the runtime's files as they are in the repository, and the error codes' files. */
function packageDir(): string {
  const dir = tempDir('svc-ts-runtime-');
  for (const name of RUNTIME_FILES) copyFileSync(path.join(runtime, name), path.join(dir, name));
  writeFileSync(path.join(dir, 'errors.js'), errorsJs());
  writeFileSync(path.join(dir, 'errors.d.ts'), errorsDts());
  return dir;
}

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
    const dir = packageDir();
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

  it('runtime.d.ts passes tsc --strict without DOM or Node types', () => {
    const checked = tsc(packageDir(), ['runtime.d.ts'], { ...STRICT_OPTIONS, noEmit: true });
    assert.equal(checked.status, 0, checked.output);
  });
});
