/**
 * svc:custom-domains — serves a workload from a customer-owned host name
 * (`domain="api.example.com"`), on the team and business plans only. Built
 * on the public plugin API only: `authorizeDeploy` gates the plan and claims
 * the names, `resolveRoute` routes verified names, `onEvent` suspends and
 * restores them when an operator changes a workspace's plan.
 */
import { PLUGIN_API_VERSION, SvcError, type DomainDirectory, type DomainView, type Plugin, type StateStore } from 'svc/plugin';
import { checkPlan, claimAll, DOMAIN_PLANS, normalize, wantedDomains } from './claims.js';
import { DomainCache } from './directory.js';
import { DomainRecords, viewOf, type DomainRecord } from './records.js';
import { createTxtLookup, type TxtLookup } from './verify.js';

export interface CustomDomainsOptions {
  /** Where claims are kept (the platform's state store: a file, or Consul KV on a cluster). */
  readonly store: StateStore;
  /** The workspace's plan (`free`, `team`, `business`). */
  planOf(workspace: string): Promise<string>;
  /** DNS server for verification, `host:port`; null or absent: the system's resolvers. */
  readonly dnsResolver?: string | null;
  /** Receives the directory the control plane lists and verifies domains through. */
  provide?(directory: DomainDirectory): void;
  /** How stale a replica's view of the claims may get, in ms (default 2000). */
  readonly refreshMs?: number;
}

export default function customDomainsPlugin(options: CustomDomainsOptions): Plugin {
  const records = new DomainRecords(options.store);
  const cache = new DomainCache(records, options.refreshMs ?? 2000);
  const lookup = createTxtLookup(options.dnsResolver ?? null);
  const now = () => new Date();
  const remember = (record: DomainRecord | null) => {
    if (record !== null) cache.set(record);
    return record;
  };

  const directory: DomainDirectory = {
    async list(workspace) {
      return (await records.list()).filter((r) => r.workspace === workspace).map(viewOf);
    },
    async verify(workspace, name) {
      const domain = normalize(name);
      const stored = await records.get(domain);
      // Another workspace's name reads exactly like an unknown one.
      if (stored === null || stored.record.workspace !== workspace) {
        throw new SvcError('not_found', `the workspace has not claimed the domain ${JSON.stringify(domain)}`, {
          hint: 'A deploy with domain="…" on a workload claims it; svc domain list shows the claimed ones.',
        });
      }
      if (stored.record.verifiedAt !== null) return viewOf(stored.record); // proved once; a record taken down later does not unserve it
      return verifiedOrProblem(stored.record, await lookup(domain));
    },
  };
  options.provide?.(directory);

  /** Marks the record verified when the lookup found its token; the view says what was found otherwise. */
  async function verifiedOrProblem(record: DomainRecord, found: TxtLookup): Promise<DomainView> {
    if ('values' in found && found.values.includes(record.token)) {
      const updated = await records.update(record.domain, (r) =>
        r.verifiedAt !== null ? null : { ...r, verifiedAt: now().toISOString() },
      );
      return viewOf(remember(updated) ?? record);
    }
    const problem =
      'problem' in found
        ? found.problem
        : `the TXT record ${viewOf(record).record.name} holds ${found.values.map((v) => JSON.stringify(v)).join(', ')}, not the token`;
    return { ...viewOf(record), reason: `${problem}; publish ${viewOf(record).record.name} TXT "${record.token}" and verify again` };
  }

  return {
    name: 'svc:custom-domains',
    apiVersion: PLUGIN_API_VERSION,
    hooks: {
      async authorizeDeploy(app, context) {
        // Previews and remote runs serve no domain: only a deployment's workload is routed from one.
        if (context.stage !== 'deployed') return app;
        const wanted = wantedDomains(app);
        if (wanted.length === 0) return app;
        checkPlan(context.workspace, await options.planOf(context.workspace), wanted);
        if (context.dryRun === true) return app;
        for (const record of await claimAll(records, context.workspace, app.name, wanted, now)) cache.set(record);
        return app;
      },

      resolveRoute(request) {
        return cache.resolve(request.host);
      },

      async onEvent(event) {
        if (event.type !== 'workspace.plan_changed') return;
        // A downgrade keeps the claims (nobody else can take the names) and stops serving them; an upgrade serves them again.
        const suspend = !DOMAIN_PLANS.includes(event.plan);
        for (const record of await records.list()) {
          if (record.workspace !== event.workspace) continue;
          remember(
            await records.update(record.domain, (r) => {
              if (suspend === (r.suspendedAt !== null)) return null;
              return { ...r, suspendedAt: suspend ? event.at : null };
            }),
          );
        }
      },
    },
  };
}
