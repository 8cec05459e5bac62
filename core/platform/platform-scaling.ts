/**
 * What requests are served from and scaled by: the route table, the
 * upstream pools and admission of the gateway, and the autoscaler that
 * scales each unit by its load; on a cluster of replicas, the sync through
 * which followers copy the leader's routes and report their load to it.
 */
import { Autoscaler } from '../services/autoscale/controller.js';
import { QuotaBook } from '../services/workspaces/quota-book.js';
import type { AgentWatches } from './agent-watches.js';
import type { DetachableDriver } from '../traffic/cluster/detachable-driver.js';
import { replicaSupervisor } from '../traffic/cluster/replica-supervisor.js';
import { ReplicaSync } from '../traffic/cluster/replica-sync.js';
import { Admission } from '../traffic/gateway/admission.js';
import { UpstreamPools } from '../traffic/gateway/proxy.js';
import { RouteTable } from '../traffic/gateway/route-table.js';
import type { RecentLogs } from '../infra/logs/recent-logs.js';
import type { PlatformPlugins } from './platform-plugins.js';
import { quietWithoutConsul, type Wiring } from './platform-wiring.js';
import type { ServiceRegistry } from '../infra/registry/types.js';
import type { LogSink } from '../infra/scheduler/types.js';

export interface ScalingNeeds {
  readonly plugins: PlatformPlugins;
  readonly agents: AgentWatches;
  readonly registry: ServiceRegistry;
  readonly driver: DetachableDriver;
  readonly electing: boolean;
  readonly recentLogs: RecentLogs;
  readonly sink: LogSink;
  /** Filled in here: the driver and the replica sync report to the autoscaler, which is built on both. */
  readonly toAutoscaler: { target?: Autoscaler };
}

export interface Scaling {
  readonly routes: RouteTable;
  readonly upstreams: UpstreamPools;
  readonly admission: Admission;
  /** Followers copy the leader's routes and report their load (replicas with the Consul registry); else null. */
  readonly sync: ReplicaSync | null;
  readonly autoscaler: Autoscaler;
  /** The per-workspace quotas in force (config, or set by command); started when this replica leads. */
  readonly quotas: QuotaBook;
}

export function buildScaling(wiring: Wiring, needs: ScalingNeeds): Scaling {
  const { config, options, controlPlane, state, metrics, reportAs } = wiring;
  const { agents, registry, driver, toAutoscaler } = needs;
  const { plugins, policy, fallback } = needs.plugins;
  const routes = new RouteTable();
  const upstreams = new UpstreamPools(registry, { crashCause: (instance) => driver.crashCause?.(instance) });
  const admission = new Admission(registry, { waitTimeoutMs: config.queueTimeoutSeconds * 1000 });
  // Replicas share the work: followers copy the leader's routes and report their load to its autoscaler.
  // Only with the Consul registry: a follower finds the instances there (the embedded one knows only this replica's).
  const sync =
    needs.electing && config.registry === 'consul'
      ? new ReplicaSync({
          store: controlPlane.store,
          routes,
          admission,
          registry,
          evaluate: (units) => toAutoscaler.target?.evaluate(units),
          report: quietWithoutConsul(agents, reportAs('REPLICAS')),
        })
      : null;
  const quotas = new QuotaBook(controlPlane.store, config.workspaceQuotas, reportAs('QUOTAS'));
  const autoscaler = new Autoscaler({
    driver,
    admission,
    policy,
    fallback,
    logs: needs.recentLogs,
    log: needs.sink,
    emit: (event) => void plugins.parallel('onEvent', event),
    report: reportAs('AUTOSCALE'),
    leads: () => state.leader?.isLeader() ?? true,
    metrics,
    quotaOf: (workspace) => quotas.quotaOf(workspace),
    ...(sync === null ? {} : { peers: sync.peers }),
    ...options.autoscale,
  });
  toAutoscaler.target = autoscaler;
  if (sync !== null) {
    // In place of the autoscaler (it supervised admission from its constructor): on a follower, units it does not manage still wait.
    admission.supervise(
      replicaSupervisor({
        autoscaler,
        leads: () => state.leader?.isLeader() ?? false,
        notice: (unit, refused) => sync.notice(unit, refused),
        hasInstances: (unit) => registry.instances(unit).length > 0,
      }),
    );
  }
  return { routes, upstreams, admission, sync, autoscaler, quotas };
}
