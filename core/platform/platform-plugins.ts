/**
 * The plugin host of a platform: svc's own features (built-in plugins) and
 * the config's plugins, loaded through the same host, and the scaling
 * policy the config names among those they register.
 */
import { DEFAULT_SCALING_POLICY } from '../../config/schema.js';
import { resolvePolicy } from '../services/autoscale/policy.js';
import type { DomainDirectory } from '../model/domains/types.js';
import type { AcmeCertificates } from '../traffic/gateway/tls/acme.js';
import { orderingOnVerify } from './acme-setup.js';
import { loadBuiltinPlugins } from './builtin-plugins.js';
import { createPluginHost, type PluginHost, type RegisteredPolicy } from '../infra/plugin/host.js';
import { loadPlugins, resolvePlugins } from '../infra/plugin/load.js';
import type { ScalingPolicy } from '../infra/plugin/types.js';
import type { Wiring } from './platform-wiring.js';

export interface PlatformPlugins {
  readonly plugins: PluginHost;
  readonly policy: RegisteredPolicy;
  /** The default policy's decision, for a policy that fails. */
  readonly fallback: ScalingPolicy;
  /** The custom domains' directory once the domains plugin provided it; null before and without. */
  domains(): DomainDirectory | null;
}

export async function buildPlugins(wiring: Wiring, acme: AcmeCertificates | null): Promise<PlatformPlugins> {
  const { config, controlPlane, reportAs } = wiring;
  let domains: DomainDirectory | null = null;
  const builtins = await loadBuiltinPlugins({
    verifier: controlPlane.verifier,
    domains: {
      store: controlPlane.store,
      planOf: async (workspace) => (await controlPlane.workspaces.require(workspace)).plan,
      dnsResolver: config.dnsResolver,
      provide: (directory) => {
        domains = acme === null ? directory : orderingOnVerify(directory, acme);
      },
    },
  });
  const userPlugins = await loadPlugins([...config.plugins], { cwd: process.cwd() });
  const plugins = createPluginHost(resolvePlugins({ builtins, user: userPlugins }), { onParallelError: reportAs('EVENT') });
  // Before anything starts: an unknown policy name is a config error listing the known ones.
  const policy = resolvePolicy(plugins.scalingPolicies, config.scalingPolicy);
  const fallback = resolvePolicy(plugins.scalingPolicies, DEFAULT_SCALING_POLICY).decide;
  return { plugins, policy, fallback, domains: () => domains };
}
