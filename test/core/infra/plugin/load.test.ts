import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { SvcError } from '../../../../core/model/errors.js';
import { packageRoot } from '../../../../core/model/paths.js';
import { createPluginHost } from '../../../../core/infra/plugin/host.js';
import { loadPlugins, resolvePlugins } from '../../../../core/infra/plugin/load.js';
import type { Plugin } from '../../../../core/infra/plugin/types.js';

// Compiled tests live in dist/test, so fixtures are addressed from the repository root.
const cwd = packageRoot;
const fixture = (name: string) => `./test/fixtures/plugins/${name}`;

describe('loadPlugins()', () => {
  it('loads a plugin by path and passes it the options', async () => {
    const [plugin] = await loadPlugins([{ module: fixture('options-plugin.mjs'), options: { workspace: 'acme' } }], { cwd });
    assert.equal(plugin?.name, 'fixture:options');
    const host = createPluginHost([plugin]);
    const request = { headers: {}, url: new URL('http://localhost/'), workspace: 'acme', transport: 'http' as const };
    assert.deepEqual(await host.first('authenticate', request), { workspace: 'acme', subject: 'fixture' });
  });

  it('keeps the order of the specs and accepts plain strings', async () => {
    const plugins = await loadPlugins([fixture('options-plugin.mjs')], { cwd });
    assert.deepEqual(
      plugins.map((p) => p.name),
      ['fixture:options'],
    );
    assert.equal((plugins[0] as Plugin & { options: unknown }).options, undefined);
  });

  it('reports a missing path with where it was resolved from', async () => {
    await assert.rejects(loadPlugins(['./nope/missing-plugin.js'], { cwd }), (error: SvcError) => {
      assert.equal(error.code, 'plugin_invalid');
      assert.match(error.message, /cannot find plugin module "\.\/nope\/missing-plugin\.js"/);
      assert.match(error.hint ?? '', /relative paths are resolved from/);
      assert.deepEqual(error.details, { spec: './nope/missing-plugin.js' });
      return true;
    });
  });

  it('reports a missing package with how to install it', async () => {
    await assert.rejects(loadPlugins(['svc-plugin-that-is-not-installed'], { cwd }), {
      code: 'plugin_invalid',
      message: /cannot find plugin module "svc-plugin-that-is-not-installed"/,
      hint: /npm install svc-plugin-that-is-not-installed/,
    });
  });

  it('reports a module without a default-exported factory', async () => {
    await assert.rejects(loadPlugins([fixture('no-default.mjs')], { cwd }), {
      code: 'plugin_invalid',
      message: /has no default-exported factory/,
    });
    await assert.rejects(loadPlugins([fixture('object-default.mjs')], { cwd }), {
      code: 'plugin_invalid',
      hint: /Export a factory returning the plugin, not the plugin object/,
    });
  });

  it('reports a factory that throws, keeping the cause', async () => {
    await assert.rejects(loadPlugins([fixture('throwing-factory.mjs')], { cwd }), (error: SvcError) => {
      assert.equal(error.code, 'plugin_invalid');
      assert.match(error.message, /factory of plugin module ".*throwing-factory\.mjs" threw: option "url" is required/);
      assert.ok(error.cause instanceof Error);
      return true;
    });
  });

  it('reports a factory that returns something other than a plugin', async () => {
    await assert.rejects(loadPlugins([fixture('not-a-plugin.mjs')], { cwd }), {
      code: 'plugin_invalid',
      message: /did not return a plugin/,
    });
  });

  it('reports an import failing inside the module as a load error, not as "not found"', async () => {
    await assert.rejects(loadPlugins([fixture('broken-import.mjs')], { cwd }), {
      code: 'plugin_invalid',
      message: /cannot load plugin module ".*broken-import\.mjs": .*svc-fixture-package-that-does-not-exist/,
    });
  });

  it('reports a spec without a module', async () => {
    await assert.rejects(loadPlugins([{ options: {} } as never], { cwd }), { code: 'plugin_invalid', message: /names no module/ });
  });

  describe('from npm packages', () => {
    let project: string;
    before(async () => {
      project = await mkdtemp(path.join(os.tmpdir(), 'svc-plugins-'));
      // An ESM-only package: its "exports" has "import" but no "require" condition.
      const root = path.join(project, 'node_modules', '@acme', 'svc-plugin-esm');
      await mkdir(root, { recursive: true });
      await writeFile(
        path.join(root, 'package.json'),
        JSON.stringify({
          name: '@acme/svc-plugin-esm',
          type: 'module',
          exports: { '.': { types: './index.d.ts', import: './index.js' } },
        }),
      );
      await writeFile(path.join(root, 'index.js'), 'export default (o) => ({ name: "acme:esm", apiVersion: 1, options: o });\n');
      // A CommonJS package compiled from TypeScript: exports.default = factory.
      const cjs = path.join(project, 'node_modules', 'svc-plugin-cjs');
      await mkdir(cjs, { recursive: true });
      await writeFile(path.join(cjs, 'package.json'), JSON.stringify({ name: 'svc-plugin-cjs', main: 'main.js' }));
      await writeFile(path.join(cjs, 'main.js'), 'exports.default = () => ({ name: "acme:cjs", apiVersion: 1 });\n');
      // A package of several plugins behind one subpath pattern: "./*" maps `svc-plugins-many/<name>` to ./dist/<name>.js.
      const many = path.join(project, 'node_modules', 'svc-plugins-many');
      await mkdir(path.join(many, 'dist'), { recursive: true });
      await writeFile(
        path.join(many, 'package.json'),
        JSON.stringify({
          name: 'svc-plugins-many',
          type: 'module',
          exports: { './*': { import: './dist/*.js' }, './internal/*': null },
        }),
      );
      await writeFile(path.join(many, 'dist', 'audit.js'), 'export default () => ({ name: "many:audit", apiVersion: 1 });\n');
      await mkdir(path.join(many, 'dist', 'internal'), { recursive: true });
      await writeFile(path.join(many, 'dist', 'internal', 'secret.js'), 'export default () => ({ name: "many:secret", apiVersion: 1 });\n');
    });
    after(() => rm(project, { recursive: true, force: true }));

    it('resolves packages from cwd, including ESM-only and CommonJS ones', async () => {
      const plugins = await loadPlugins([{ module: '@acme/svc-plugin-esm', options: 1 }, 'svc-plugin-cjs'], { cwd: project });
      assert.deepEqual(
        plugins.map((p) => p.name),
        ['acme:esm', 'acme:cjs'],
      );
      assert.equal((plugins[0] as Plugin & { options: unknown }).options, 1);
    });

    it('follows a "./*" subpath pattern in "exports", and its exclusions', async () => {
      const plugins = await loadPlugins(['svc-plugins-many/audit'], { cwd: project });
      assert.deepEqual(
        plugins.map((p) => p.name),
        ['many:audit'],
      );
      await assert.rejects(loadPlugins(['svc-plugins-many/internal/secret'], { cwd: project }), {
        code: 'plugin_invalid',
        message: /cannot find plugin module "svc-plugins-many\/internal\/secret"/,
      });
      await assert.rejects(loadPlugins(['svc-plugins-many/missing'], { cwd: project }), {
        code: 'plugin_invalid',
        message: /cannot find plugin module "svc-plugins-many\/missing"/,
      });
    });
  });
});

describe('resolvePlugins()', () => {
  const user = (name: string, enforce?: 'pre' | 'post'): Plugin => ({ name: `user:${name}`, apiVersion: 1, enforce });
  const builtin: Plugin = { name: 'svc:auth-token', apiVersion: 1 };

  it('puts user "pre" plugins first, then built-ins, then user plugins, then user "post" plugins', () => {
    const list = resolvePlugins({ builtins: [builtin, false], user: [user('late', 'post'), user('a'), user('early', 'pre'), user('b')] });
    const names = createPluginHost(list).plugins.map((p) => p.name);
    assert.deepEqual(names, ['user:early', 'svc:auth-token', 'user:a', 'user:b', 'user:late']);
  });
});
