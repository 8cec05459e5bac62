/**
 * Registration checks: a plugin is refused before any of its hooks can run,
 * with an error that names it and says what to change.
 */
import { SvcError } from '../../model/errors.js';
import { PLUGIN_API_VERSION, hookKinds, type Plugin } from './types.js';

/** `scope:kebab-name`, both parts lower-case kebab, e.g. `svc:auth-token`. */
const PLUGIN_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*:[a-z0-9]+(?:-[a-z0-9]+)*$/;
const validHooks = Object.keys(hookKinds);

/** Throws `plugin_invalid` or `plugin_incompatible` unless `value` is a usable plugin. */
export function validatePlugin(value: unknown, position: number): asserts value is Plugin {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid(
      `plugin #${position + 1} is not a plugin object (got ${describe(value)})`,
      typeof value === 'function'
        ? 'Call the plugin factory: write myPlugin(options), not myPlugin.'
        : 'A plugin is an object { name, apiVersion, hooks } returned by a factory.',
    );
  }
  if (typeof (value as { then?: unknown }).then === 'function') {
    throw invalid(`plugin #${position + 1} is a Promise`, 'Await async plugin factories (or use loadPlugins()) before creating the host.');
  }
  const plugin = value as Record<string, unknown>;
  const { name } = plugin;
  if (typeof name !== 'string' || !PLUGIN_NAME.test(name)) {
    throw invalid(
      `plugin #${position + 1} has an invalid name ${describe(name)}`,
      'Name plugins "scope:kebab-name", for example "acme:audit-log".',
    );
  }
  checkApiVersion(name, plugin.apiVersion);
  if (plugin.enforce !== undefined && plugin.enforce !== 'pre' && plugin.enforce !== 'post') {
    throw invalid(`plugin "${name}" has enforce ${describe(plugin.enforce)}`, 'Use "pre", "post" or leave it out.');
  }
  checkHooks(name, plugin.hooks);
  for (const registry of ['scalingPolicies', 'exporters'] as const) {
    const value = plugin[registry];
    if (value !== undefined && !isRecord(value)) {
      throw invalid(`plugin "${name}" has ${registry} ${describe(value)}`, `Make ${registry} an object keyed by name.`);
    }
  }
  checkScalingPolicies(name, plugin.scalingPolicies as Record<string, unknown> | undefined);
  checkExporters(name, plugin.exporters as Record<string, unknown> | undefined);
}

/** Lower-case kebab, like the built-in `queue-depth`: the config setting `scalingPolicy` names one. */
const POLICY_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

function checkScalingPolicies(name: string, policies: Record<string, unknown> | undefined): void {
  for (const [policy, value] of Object.entries(policies ?? {})) {
    if (!POLICY_NAME.test(policy)) {
      throw invalid(
        `plugin "${name}" names a scaling policy ${JSON.stringify(policy)}`,
        'Name policies in lower-case kebab, for example "acme-burst".',
      );
    }
    if (typeof value !== 'function') {
      throw invalid(
        `plugin "${name}" scaling policy "${policy}" is ${describe(value)}, not a function`,
        'A scaling policy is a function (input: ScalingInput) => number of containers.',
      );
    }
  }
}

/** Lower-case kebab, like the built-in `python`: `svc app export --language <name>` picks one. */
const EXPORTER_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

function checkExporters(name: string, exporters: Record<string, unknown> | undefined): void {
  for (const [exporter, value] of Object.entries(exporters ?? {})) {
    const where = `plugin "${name}" exporter "${exporter}"`;
    if (!EXPORTER_NAME.test(exporter)) {
      throw invalid(
        `plugin "${name}" names an exporter ${JSON.stringify(exporter)}`,
        'Name exporters in lower-case kebab, for example "python" or "acme-go": svc app export --language <name> picks one.',
      );
    }
    const shape =
      'An exporter is an object { language, description, export(app, options) } (ClientExporter in core/infra/plugin/types.ts).';
    if (!isRecord(value)) throw invalid(`${where} is ${describe(value)}, not an exporter object`, shape);
    if (typeof value.export !== 'function') throw invalid(`${where} has no export() function (got ${describe(value.export)})`, shape);
    for (const field of ['language', 'description'] as const) {
      const text = value[field];
      if (typeof text !== 'string' || text.trim() === '')
        throw invalid(`${where} has ${field} ${describe(text)}, not a non-empty string`, shape);
    }
  }
}

/** Throws `plugin_invalid` when two plugins provide a scaling policy, or an exporter, of the same name. */
export function checkUniqueRegistries(plugins: readonly Plugin[]): void {
  checkUnique(plugins, (plugin) => plugin.scalingPolicies, 'scaling policy', 'Policy names are global');
  checkUnique(plugins, (plugin) => plugin.exporters, 'exporter', 'Exporter names are global');
}

function checkUnique(plugins: readonly Plugin[], registry: (plugin: Plugin) => object | undefined, what: string, rule: string): void {
  const owner = new Map<string, string>();
  for (const plugin of plugins) {
    for (const entry of Object.keys(registry(plugin) ?? {})) {
      const first = owner.get(entry);
      if (first !== undefined) {
        throw invalid(
          `plugins "${first}" and "${plugin.name}" both provide the ${what} "${entry}"`,
          `${rule}: rename the ${what} in one of the plugins, or remove one plugin from the config.`,
        );
      }
      owner.set(entry, plugin.name);
    }
  }
}

/** Throws `plugin_invalid` naming the first plugin name that appears twice. */
export function checkUniqueNames(plugins: readonly Plugin[]): void {
  const seen = new Set<string>();
  for (const { name } of plugins) {
    if (seen.has(name)) {
      throw invalid(
        `plugin "${name}" is registered twice`,
        'Remove the duplicate from the plugin list (config "plugins" or the built-ins).',
      );
    }
    seen.add(name);
  }
}

function checkApiVersion(name: string, version: unknown): void {
  if (version === PLUGIN_API_VERSION) return;
  const newer = typeof version === 'number' && version > PLUGIN_API_VERSION;
  throw new SvcError(
    'plugin_incompatible',
    `plugin "${name}" targets plugin API version ${describe(version)}, but this svc provides version ${PLUGIN_API_VERSION}`,
    {
      details: { plugin: name, apiVersion: version, supported: PLUGIN_API_VERSION },
      hint: newer ? 'Upgrade svc, or use an older release of the plugin.' : 'Upgrade the plugin to a release built for this svc.',
    },
  );
}

function checkHooks(name: string, hooks: unknown): void {
  if (hooks === undefined) return;
  if (!isRecord(hooks)) throw invalid(`plugin "${name}" has hooks ${describe(hooks)}`, 'Make hooks an object keyed by hook name.');
  for (const [hook, value] of Object.entries(hooks)) {
    if (!Object.hasOwn(hookKinds, hook)) {
      throw invalid(
        `plugin "${name}" declares unknown hook "${hook}"; valid hooks are ${validHooks.join(', ')}`,
        'Check the spelling, or whether the hook needs a newer svc (plugin API version).',
      );
    }
    if (typeof value === 'function') continue;
    const handler = isRecord(value) ? value.handler : undefined;
    const order = isRecord(value) ? value.order : undefined;
    if (typeof handler !== 'function' || (order !== undefined && order !== 'pre' && order !== 'post')) {
      throw invalid(
        `plugin "${name}" hook "${hook}" is neither a function nor { handler, order?: "pre" | "post" }`,
        `Got ${describe(value)}.`,
      );
    }
  }
}

function invalid(message: string, hint: string): SvcError {
  return new SvcError('plugin_invalid', message, { hint });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Short, safe rendering of an arbitrary value for error messages. */
function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return JSON.stringify(value) ?? String(value);
}
