/**
 * Loading third-party plugins named in config, and the one list that says
 * where svc's built-in plugins and the user's plugins go.
 */
import { SvcError } from '../../model/errors.js';
import type { PluginOption } from './host.js';
import { isPathSpec, resolveModule } from './resolve-module.js';
import type { Plugin } from './types.js';

/**
 * One entry of the config file's `plugins` list: a module (npm package name,
 * or a path relative to the project) whose default export is the factory,
 * optionally with the options passed to it.
 */
export type PluginSpec = string | { readonly module: string; readonly options?: unknown };

export interface LoadPluginsOptions {
  /** Project directory: relative paths and npm packages are resolved from here. */
  readonly cwd: string;
}

/**
 * Imports each module in order and calls its default-exported factory with
 * the spec's options (`undefined` when none). Any failure is `plugin_invalid`
 * naming the spec. Full plugin validation happens in `createPluginHost`.
 */
export async function loadPlugins(specs: readonly PluginSpec[], opts: LoadPluginsOptions): Promise<Plugin[]> {
  const plugins: Plugin[] = [];
  // One at a time: factories may have side effects, and the first bad spec is the one reported.
  for (const spec of specs) plugins.push(await loadPlugin(spec, opts.cwd));
  return plugins;
}

/**
 * The final plugin list, in one place (Vite `resolvePlugins` style). The host
 * sorts by `enforce` again; spelling the tiers out here keeps the order
 * readable: user `pre` plugins may, for example, authenticate before the
 * built-in token check.
 */
export function resolvePlugins(input: { builtins: readonly PluginOption[]; user: readonly Plugin[] }): PluginOption[] {
  const tier = (enforce: Plugin['enforce']) => input.user.filter((plugin) => plugin.enforce === enforce);
  return [
    ...tier('pre'), // user plugins with enforce: 'pre'
    ...input.builtins, // svc's own features (svc:auth-token, …), built on the same public API
    ...tier(undefined), // user plugins, in config order
    ...tier('post'), // user plugins with enforce: 'post'
  ];
}

async function loadPlugin(spec: PluginSpec, cwd: string): Promise<Plugin> {
  const { module, options } = normalizeSpec(spec);
  let url: string | null;
  try {
    url = resolveModule(module, cwd);
  } catch (error) {
    throw invalid(
      module,
      `cannot load plugin module "${module}": ${messageOf(error)}`,
      'Fix the package\'s "exports" or "main" in its package.json, or the path in config "plugins".',
      error,
    );
  }
  if (url === null) {
    throw invalid(
      module,
      `cannot find plugin module "${module}" (resolved from ${cwd})`,
      isPathSpec(module)
        ? `Check the path in config "plugins"; relative paths are resolved from ${cwd}.`
        : `Install it in the project (npm install ${module}), or give a path starting with "./".`,
    );
  }
  let exports: { default?: unknown };
  try {
    exports = (await import(url)) as { default?: unknown };
  } catch (error) {
    throw invalid(
      module,
      `cannot load plugin module "${module}": ${messageOf(error)}`,
      'Fix the error in the module (plugins must be JavaScript that Node can import; compile TypeScript first).',
      error,
    );
  }
  const factory = factoryOf(exports.default);
  if (factory === null) {
    throw invalid(
      module,
      `plugin module "${module}" has no default-exported factory function`,
      isPluginLike(exports.default)
        ? 'Export a factory returning the plugin, not the plugin object: export default (options) => ({ name, apiVersion, hooks }).'
        : 'Add: export default function myPlugin(options) { return { name: "scope:name", apiVersion: 1, hooks: {} }; }',
    );
  }
  let plugin: unknown;
  try {
    plugin = await factory(options);
  } catch (error) {
    throw invalid(
      module,
      `the factory of plugin module "${module}" threw: ${messageOf(error)}`,
      'Check the plugin\'s options in config "plugins" against its documentation.',
      error,
    );
  }
  if (!isPluginLike(plugin)) {
    throw invalid(
      module,
      `the factory of plugin module "${module}" did not return a plugin`,
      'The factory must return an object { name: "scope:name", apiVersion: 1, hooks }.',
    );
  }
  return plugin;
}

function normalizeSpec(spec: PluginSpec): { module: string; options: unknown } {
  if (typeof spec === 'string' && spec !== '') return { module: spec, options: undefined };
  if (typeof spec === 'object' && spec !== null && typeof spec.module === 'string' && spec.module !== '') {
    return { module: spec.module, options: spec.options };
  }
  throw invalid(
    JSON.stringify(spec) ?? String(spec),
    `plugin spec ${JSON.stringify(spec) ?? String(spec)} names no module`,
    'Write "./my-plugin.js", "svc-plugin-x" or { "module": "svc-plugin-x", "options": { … } }.',
  );
}

/** The default export if it is a function; also unwraps CommonJS `exports.default = factory`. */
function factoryOf(value: unknown): ((options: unknown) => unknown) | null {
  if (typeof value === 'function') return value as (options: unknown) => unknown;
  const inner = (value as { default?: unknown } | null | undefined)?.default;
  return typeof inner === 'function' ? (inner as (options: unknown) => unknown) : null;
}

function isPluginLike(value: unknown): value is Plugin {
  return typeof value === 'object' && value !== null && typeof (value as { name?: unknown }).name === 'string';
}

function invalid(spec: string, message: string, hint: string, cause?: unknown): SvcError {
  return new SvcError('plugin_invalid', message, { hint, details: { spec }, cause });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
