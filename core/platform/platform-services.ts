/**
 * Builds every object of the platform from its configuration, in dependency
 * order, without starting any: nothing listens, leads or restores yet
 * (core/platform/platform.ts does that). The embedded default: local processes, an
 * in-process registry, files in the data dir. On a cluster (`scheduler:
 * nomad`, `state: consul`): Nomad jobs, the Consul registry, Consul KV, and
 * replicas that share the work.
 */
import path from 'node:path';
import { tlsEnabled } from '../../config/tls-schema.js';
import type { ControlPlane } from '../http/api/control-plane.js';
import type { Autoscaler } from '../services/autoscale/controller.js';
import { artifactSecret, createArtifactUrls, type ArtifactUrls } from '../infra/bundles/artifact-url.js';
import { watchAgents, type AgentWatches } from './agent-watches.js';
import type { DetachableDriver } from '../traffic/cluster/detachable-driver.js';
import type { LeaderForward } from '../traffic/cluster/leader-forward.js';
import type { ReplicaRole } from '../traffic/cluster/replica-gate.js';
import type { ReplicaSync } from '../traffic/cluster/replica-sync.js';
import type { DeploymentManager } from '../services/deployments/manager.js';
import type { Admission } from '../traffic/gateway/admission.js';
import type { ErrorReporter } from '../traffic/gateway/error-middleware.js';
import type { Listeners } from '../traffic/gateway/listeners.js';
import type { UpstreamPools } from '../traffic/gateway/proxy.js';
import type { AcmeCertificates } from '../traffic/gateway/tls/acme.js';
import { acmeFor } from './acme-setup.js';
import { Certificates } from '../traffic/gateway/tls/certificates.js';
import type { TerminalSockets } from '../http/api/terminal-socket.js';
import type { QuotaBook } from '../services/workspaces/quota-book.js';
import type { WebSocketBridge } from '../traffic/gateway/websocket-bridge.js';
import type { ImageBuilder } from '../infra/images/types.js';
import { DeploymentLogs } from '../infra/logs/deployment-logs.js';
import { RecentLogs } from '../infra/logs/recent-logs.js';
import type { PlatformMetrics } from '../infra/metrics/platform-metrics.js';
import { buildBackends } from './platform-backends.js';
import { buildFront } from './platform-front.js';
import type { PlatformOptions } from './platform-options.js';
import { buildPlugins } from './platform-plugins.js';
import { buildScaling } from './platform-scaling.js';
import type { PlatformState, Wiring } from './platform-wiring.js';
import { buildWorkloadServices } from './platform-workloads.js';
import type { PluginHost } from '../infra/plugin/host.js';
import type { ServiceRegistry } from '../infra/registry/types.js';
import type { IdleLeases } from '../services/runs/idle-leases.js';
import type { Previews } from '../services/runs/previews.js';
import type { UsageMeter } from '../services/usage/usage-meter.js';
import type { RunManager } from '../services/runs/runs.js';
import type { MapManager } from '../services/maps/maps.js';
import type { ScheduleLeader } from '../services/schedules/scheduler.js';
import type { CallExecutor } from '../services/calls/executor.js';
import { zygotesFromEnvironment } from './zygotes-setting.js';
import { inventoryLine, readGpuInventory } from '../infra/gpus/inventory.js';
import type { LocalDriver } from '../infra/scheduler/local/driver.js';
import type { NomadDriver } from '../infra/scheduler/nomad/types.js';
import type { LogSink } from '../infra/scheduler/types.js';

export interface Services {
  readonly plugins: PluginHost;
  readonly logs: LogSink;
  readonly report: ErrorReporter;
  readonly deploymentLogs: DeploymentLogs;
  readonly registry: ServiceRegistry;
  /** The config's scheduler driver itself. */
  readonly scheduler: LocalDriver | NomadDriver;
  /** The scheduler as the platform uses it: a replica that lost the leadership lets go of the workloads. */
  readonly driver: DetachableDriver;
  readonly images: ImageBuilder;
  readonly admission: Admission;
  readonly upstreams: UpstreamPools;
  /** Followers copy the leader's routes and report their load (replicas with the Consul registry); else null. */
  readonly sync: ReplicaSync | null;
  readonly autoscaler: Autoscaler;
  readonly quotas: QuotaBook;
  readonly deployments: DeploymentManager;
  readonly leases: IdleLeases;
  readonly runs: RunManager;
  readonly maps: MapManager;
  /** What the leader does for scheduled functions: run them (ScheduleRunner), or on Nomad keep their periodic jobs registered. */
  readonly schedules: ScheduleLeader;
  /** The leader's runner of spawned calls. */
  readonly callExecutor: CallExecutor;
  readonly previews: Previews;
  /** What each workload's containers use, kept by the hour (`svc usage`). */
  readonly usage: UsageMeter;
  readonly forward: LeaderForward;
  readonly websockets: WebSocketBridge;
  readonly terminals: TerminalSockets;
  /** The gateway's listeners (HTTP, or HTTPS and maybe plain HTTP beside it); not listening yet. */
  readonly listeners: Listeners;
  /** Orders and renews custom domains' certificates (`acmeDirectory`); null without. */
  readonly acme: AcmeCertificates | null;
  /** What `/metrics` shows. */
  readonly metrics: PlatformMetrics;
  /** True when replicas sharing Consul KV elect a leader; else this svc always leads. */
  readonly electing: boolean;
  /** Whether svc reaches its Consul and Nomad agents now (probed every 2 s). */
  readonly agents: AgentWatches;
  role(): ReplicaRole;
}

/** Builds the platform's objects stage by stage (core/platform-*.ts), each stage on what the ones before built. */
export async function buildServices(
  options: PlatformOptions,
  controlPlane: ControlPlane,
  state: PlatformState,
  metrics: PlatformMetrics,
): Promise<Services> {
  const { config } = options;
  const logs: LogSink = options.logs ?? (() => {});
  const report: ErrorReporter = options.report ?? ((error) => console.error(error));
  const reportAs = (method: string) => (error: unknown) => report(error, { method, path: '', requestId: undefined });
  const system = (text: string) => logs({ unit: '', container: '', stream: 'system', text, time: new Date() });
  const wiring: Wiring = { options, config, controlPlane, state, metrics, report, reportAs, system };
  // First: certificate files that cannot serve are a config error before anything is built.
  const certificates = tlsEnabled(config)
    ? Certificates.open({ cert: config.tlsCert!, key: config.tlsKey!, dir: config.tlsCertDir })
    : null;
  const zygotes = options.zygotes ?? zygotesFromEnvironment(); // likewise: SVC_ZYGOTES=maybe fails here

  // Certificates for verified custom domains over ACME, when an ACME directory is configured.
  const acme = acmeFor(config, system, reportAs('ACME'));
  // svc's own features load like the user's plugins, through the same host.
  const pluginSet = await buildPlugins(wiring, acme);
  const { plugins } = pluginSet;

  const { recentLogs, deploymentLogs, sink } = await buildLogs(wiring, logs);

  const artifacts = await artifactUrls(options, system);
  // Replicas sharing Consul KV elect one leader, the only one that runs deployments; on its own svc always leads.
  const electing = config.state === 'consul' && options.state === undefined;
  if (config.scheduler === 'nomad' && config.publicUrl === null) system(noPublicUrlWarning(electing));
  // The one cycle: the driver (container exits) and the replica sync (followers' load) report to the autoscaler, which is built on both.
  const toAutoscaler: { target?: Autoscaler } = {};
  const agents = watchAgents(config, system);
  // The embedded default hands out the machine's GPUs itself; Nomad's clients have theirs.
  const gpus = config.scheduler === 'local' ? await readGpuInventory(config.gpuInventory) : null;
  if (gpus !== null) system(inventoryLine(gpus));
  const backends = buildBackends(wiring, { plugins, agents, sink, zygotes, artifacts, toAutoscaler, gpus });
  const scaling = buildScaling(wiring, {
    plugins: pluginSet,
    agents,
    registry: backends.registry,
    driver: backends.driver,
    electing,
    recentLogs,
    sink,
    toAutoscaler,
  });
  const workloads = buildWorkloadServices(wiring, { plugins, backends, scaling, deploymentLogs });
  const front = buildFront(wiring, {
    plugins,
    agents,
    backends,
    scaling,
    workloads,
    deploymentLogs,
    artifacts,
    domains: pluginSet.domains(),
    certificates,
    acme,
  });

  // Last: a start that failed above leaves no probe running.
  agents.consul?.start();
  agents.nomad?.start();
  acme?.start();
  return collectServices({ plugins, logs, report, deploymentLogs, electing, agents, acme, metrics }, backends, scaling, workloads, front);
}

/** Nomad clients fetch each bundle through a signed URL: they hold no svc token. Null when nothing downloads bundles. */
async function artifactUrls(options: PlatformOptions, warn: (text: string) => void): Promise<ArtifactUrls | null> {
  const { config } = options;
  if (options.artifactSecret === undefined && config.scheduler !== 'nomad') return null;
  return createArtifactUrls({
    secret: options.artifactSecret ?? (await artifactSecret({ dataDir: config.dataDir, env: process.env, warn })),
  });
}

/**
 * Without a public URL each replica signs bundle URLs with its own address: a
 * new leader re-registers every job with another artifact source, and Nomad
 * replaces each running allocation for it (an artifact change is destructive).
 */
function noPublicUrlWarning(electing: boolean): string {
  const reach =
    'no publicUrl: Nomad tasks download their code from the address svc listens on, which only Nomad clients on this machine reach';
  const replicas = electing
    ? '; with several replicas, each one names its own address, so a take-over re-registers every job and Nomad restarts every allocation'
    : '';
  return `${reach}${replicas}; set SVC_PUBLIC_URL (or publicUrl) to an address every client reaches (a load balancer in front of the replicas)`;
}

/**
 * Where logged lines go: the recent lines kept in memory, and each deployment's history (across
 * versions), which the logs API reads and follows.
 */
async function buildLogs({ options, config, controlPlane, reportAs }: Wiring, logs: LogSink) {
  const recentLogs = new RecentLogs();
  // `svc serve` keeps nothing in the data dir; `svc server` keeps deployed apps' logs in <data dir>/logs across restarts.
  const deploymentLogs = new DeploymentLogs(
    options.state === 'memory' ? {} : { dir: path.join(config.dataDir, 'logs'), report: reportAs('LOGS') },
  );
  await deploymentLogs.restore();
  // A full disk: older log segments go before a state write is refused.
  controlPlane.makeRoomForState(() => deploymentLogs.trimOlderFiles());
  const sink = recentLogs.sink(deploymentLogs.sink(logs));
  return { recentLogs, deploymentLogs, sink };
}

/** The built stages' parts, gathered into the one object the platform holds. */
function collectServices(
  own: Pick<Services, 'plugins' | 'logs' | 'report' | 'deploymentLogs' | 'electing' | 'agents' | 'acme' | 'metrics'>,
  backends: ReturnType<typeof buildBackends>,
  scaling: ReturnType<typeof buildScaling>,
  workloads: ReturnType<typeof buildWorkloadServices>,
  front: ReturnType<typeof buildFront>,
): Services {
  const { plugins, logs, report, deploymentLogs, electing, agents, acme, metrics } = own;
  const { registry, scheduler, driver, images } = backends;
  const { admission, upstreams, sync, autoscaler, quotas } = scaling;
  const { deployments, leases, runs, maps, schedules, previews, callExecutor, usage } = workloads;
  const { forward, websockets, terminals, listeners, role } = front;
  return {
    plugins,
    logs,
    report,
    deploymentLogs,
    registry,
    scheduler,
    driver,
    images,
    admission,
    upstreams,
    sync,
    autoscaler,
    quotas,
    deployments,
    leases,
    runs,
    maps,
    schedules,
    callExecutor,
    previews,
    usage,
    forward,
    websockets,
    terminals,
    listeners,
    electing,
    role,
    agents,
    acme,
    metrics,
  };
}
