/**
 * svc's own features as plugins. The host loads them the way it loads a
 * third-party plugin (a module whose default export is the factory), so core
 * never imports `plugins/` and a built-in can use nothing a third party cannot.
 */
import type { TokenVerifier } from '../services/auth/verifier.js';
import type { DomainDirectory } from '../model/domains/types.js';
import type { StateStore } from '../model/store/types.js';
import { loadPlugins, type PluginSpec } from '../infra/plugin/load.js';
import type { Plugin } from '../infra/plugin/types.js';

/** Where the built-ins are (dist/plugins/<name>/), found from this module's place in dist/. */
const builtin = (name: string): string => new URL(`../../plugins/${name}/index.js`, import.meta.url).href;

/** The built-in client exporter (`svc app export --language`'s default). */
export const BUILTIN_EXPORTER = 'python';

export interface BuiltinContext {
  /** Where `svc:auth-token` checks tokens; without one (the CLI's host) the plugin is left out. */
  readonly verifier?: TokenVerifier;
  /** What `svc:custom-domains` keeps its claims in and asks; without it (the CLI's host) the plugin is left out. */
  readonly domains?: {
    readonly store: StateStore;
    planOf(workspace: string): Promise<string>;
    readonly dnsResolver: string | null;
    provide(directory: DomainDirectory): void;
  };
}

/** `svc:auth-token` (with a verifier), `svc:custom-domains` (with its store), `svc:autoscale-queue-depth`, `svc:export-python`, `svc:export-typescript`, in that order. */
export function loadBuiltinPlugins(context: BuiltinContext = {}): Promise<Plugin[]> {
  const specs: PluginSpec[] = [
    ...(context.verifier === undefined ? [] : [{ module: builtin('auth-token'), options: { verifier: context.verifier } }]),
    ...(context.domains === undefined ? [] : [{ module: builtin('custom-domains'), options: context.domains }]),
    builtin('autoscale-queue-depth'),
    builtin('export-python'),
    builtin('export-typescript'),
  ];
  return loadPlugins(specs, { cwd: process.cwd() });
}
