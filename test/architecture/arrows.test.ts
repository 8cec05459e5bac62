/**
 * Dependency arrows that must point one way (docs/architecture.md): `jobs/`
 * is a leaf of pure model code below the Nomad driver, built-in plugins use
 * only the public `svc/plugin` entry, and core and the CLI reach built-ins
 * through the plugin host, never by import. Imports are read with
 * TypeScript's own pre-processor, from the sources.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { packageRoot } from '../../core/model/paths.js';

/** Every `.ts` file under `dir` (relative to the package root), with the modules it imports. */
function importsUnder(dir: string): { file: string; imports: string[] }[] {
  const root = path.join(packageRoot, dir);
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => {
      const file = path.join(root, name);
      const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
      return { file: path.relative(packageRoot, file), imports: info.importedFiles.map((entry) => entry.fileName) };
    });
}

/** `../core/x.js` imported by `jobs/y.ts` → `core/x.js`; package names stay as they are. */
function target(file: string, spec: string): string {
  return spec.startsWith('.') ? path.relative(packageRoot, path.resolve(packageRoot, path.dirname(file), spec)) : spec;
}

function offending(dir: string, allowed: (target: string, file: string) => boolean): string[] {
  return importsUnder(dir).flatMap(({ file, imports }) =>
    imports.filter((spec) => !allowed(target(file, spec), file)).map((spec) => `${file} imports ${spec}`),
  );
}

describe('dependency arrows', () => {
  it("jobs/ imports only itself and core's pure model (workload, URL naming, platform paths, errors, paths)", () => {
    const pure = /^core\/model\/[a-z/-]+\.js$/;
    assert.deepEqual(
      offending('jobs', (to) => to.startsWith('node:') || to.startsWith('jobs/') || pure.test(to)),
      [],
    );
  });

  it('built-in plugins import only svc/plugin, Node and their own folder', () => {
    assert.deepEqual(
      offending(
        'plugins',
        (to, file) => to === 'svc/plugin' || to.startsWith('node:') || to.startsWith(`${file.split('/').slice(0, 2).join('/')}/`),
      ),
      [],
    );
  });

  it('core, the CLI and config never import a built-in plugin (the plugin host loads them)', () => {
    for (const dir of ['core', 'cli', 'config'])
      assert.deepEqual(
        offending(dir, (to) => !to.startsWith('plugins/')),
        [],
        dir,
      );
  });
});
