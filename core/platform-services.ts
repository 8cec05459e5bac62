/**
 * Builds every object of the platform from its configuration, in dependency
 * order, without starting any: nothing listens, leads or restores yet
 * (core/platform.ts does that). The embedded default: local processes, an
 * in-process registry, files in the data dir. On a cluster (`scheduler:
 * nomad`, `state: consul`): Nomad jobs, the Consul registry, Consul KV, and
 * replicas that share the work.
 */
import type { MetricsListener } from './metrics/metrics-listener.js';
import { metricsRoute } from './metrics/metrics-route.js';
import type { PlatformMetrics } from './metrics/platform-metrics.js';
import { unitReadings } from './metrics/unit-readings.js';
import path from 'node:path';
import { DEFAULT_SCALING_POLICY } from '../config/schema.js';
import { tlsEnabled } from '../config/tls-schema.js';
import { createCallRoute } from './api/call-route.js';
import { DEFAULT_MAX_BUNDLE_BYTES } from './api/index.js';
import { controlPlaneRoutes } from './api/control-plane-routes.js';
import type { ControlPlane } from './api/control-plane.js';
import { captureApi } from './app-api/capture.js';
import { Autoscaler } from './autoscale/controller.js';
import { resolvePolicy } from './autoscale/policy.js';
import { artifactSecret, createArtifactUrls, type ArtifactUrls } from './bundles/artifact-url.js';
import { createCodeBundles } from './bundles/service.js';
import { createDriver, createRegistry, installOf } from './cluster/backends.js';
import { detachable, type DetachableDriver } from './cluster/detachable-driver.js';
import { createLeaderForward, type LeaderForward } from './cluster/leader-forward.js';
import type { AgentWatch, Outage } from './cluster/agent-watch.js';
import { watchAgents, type AgentWatches } from './cluster/agent-watches.js';
import { createReplicaGate, type ReplicaRole } from './cluster/replica-gate.js';
import { ConsulRegistry } from './registry/consul.js';
import { zygotesFromEnvironment } from './scheduler/local/zygotes-setting.js';
import { untilInstances } from './registry/until-instances.js';
import { replicaSupervisor } from './cluster/replica-supervisor.js';
import { ReplicaSync } from './cluster/replica-sync.js';
import type { LeaderElection } from './cluster/types.js';
import { DeploymentManager } from './deployments/manager.js';
import { DeploymentRecords } from './deployments/records.js';
import { Admission } from './gateway/admission.js';
import { createGateway } from './gateway/app.js';
import type { ErrorReporter } from './gateway/error-middleware.js';
import { answerClientError, healthRoute } from './gateway/http-server.js';
import { createListeners, type Listeners } from './gateway/listeners.js';
import { UpstreamPools } from './gateway/proxy.js';
import { RouteTable } from './gateway/route-table.js';
import { Certificates } from './gateway/tls/certificates.js';
import { createWebSocketBridge, type WebSocketBridge } from './gateway/websocket-bridge.js';
import { createImageBuilder } from './images/choose-builder.js';
import type { ImageBuilder } from './images/types.js';
import { DeploymentLogs } from './logs/deployment-logs.js';
import { RecentLogs } from './logs/recent-logs.js';
import { sdkPythonPath } from './paths.js';
import { loadBuiltinPlugins } from './plugin/builtins.js';
import type { DomainDirectory } from './domains/types.js';
import type { AcmeCertificates } from './gateway/tls/acme.js';
import { acmeFor, orderingOnVerify } from './gateway/tls/acme-setup.js';
import { createPluginHost, type PluginHost } from './plugin/host.js';
import { loadPlugins, resolvePlugins } from './plugin/load.js';
import type { ServiceRegistry } from './registry/types.js';
import { IdleLeases } from './runs/idle-leases.js';
import { Previews } from './runs/previews.js';
import { RunManager } from './runs/runs.js';
import { ScheduleHistory } from './schedules/history.js';
import { checkNomadSchedules, NomadPeriodicSchedules } from './schedules/nomad-periodic.js';
import { NomadRunSource } from './schedules/nomad-runs.js';
import { ScheduleRunner, type ScheduleLeader } from './schedules/scheduler.js';
import { NomadClient } from './scheduler/nomad/client.js';
import { compilePeriodicJob } from '../jobs/periodic.js';
import type { LocalDriver } from './scheduler/local/driver.js';
import type { NomadDriver } from './scheduler/nomad/types.js';
import { createUnitCompiler, type UnitCompilerOptions } from './scheduler/nomad/unit-compiler.js';
import type { LogSink } from './scheduler/types.js';
import type { PlatformOptions } from './platform-options.js';

/** How long a deploy waits for the gateway to see a new unit's instance before it switches anyway (Consul checks every 5 s). */
const ROUTABLE_WAIT_MS = 30_000;

/** What only a started platform knows; the objects built here read it when they need it. */
export interface PlatformState {
  /** The gateway's base URL (the public URL, else the listening address); '' until it listens. */
  url: string;
  /** This replica's own address, where followers forward the API while it leads; '' until it listens. */
  self: string;
  /** The leader election among replicas (`state: consul`); null until it starts, and always without one. */
  leader: LeaderElection | null;
  /** This replica's phase while it leads; null while it does not (a follower's role comes from its route copy). */
  leaderRole: ReplicaRole | null;
  /** The metrics listener (`metricsAddress`), once it listens; null without one. */
  metricsListener: MetricsListener | null;
}

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
  readonly deployments: DeploymentManager;
  readonly leases: IdleLeases;
  readonly runs: RunManager;
  /** What the leader does for scheduled functions: run them (ScheduleRunner), or on Nomad keep their periodic jobs registered. */
  readonly schedules: ScheduleLeader;
  readonly previews: Previews;
  readonly forward: LeaderForward;
  readonly websockets: WebSocketBridge;
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

export async function buildServices(options: PlatformOptions, controlPlane: ControlPlane, state: PlatformState, metrics: PlatformMetrics): Promise<Services> {
  const { config } = options;
  const logs: LogSink = options.logs ?? (() => {});
  const report: ErrorReporter = options.report ?? ((error) => console.error(error));
  const reportAs = (method: string) => (error: unknown) => report(error, { method, path: '', requestId: undefined });
  const system = (text: string) => logs({ unit: '', container: '', stream: 'system', text, time: new Date() });
  // First: certificate files that cannot serve are a config error before anything is built.
  const certificates = tlsEnabled(config) ? Certificates.open({ cert: config.tlsCert!, key: config.tlsKey!, dir: config.tlsCertDir }) : null;
  const zygotes = options.zygotes ?? zygotesFromEnvironment(); // likewise: SVC_ZYGOTES=maybe fails here

  // Certificates for verified custom domains over ACME, when an ACME directory is configured.
  const acme = acmeFor(config, system, reportAs('ACME'));
  // svc's own features load like the user's plugins, through the same host.
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

  const recentLogs = new RecentLogs();
  // Each line also goes to its deployment's history (across versions), which the logs API reads and follows.
  // `svc serve` keeps nothing in the data dir; `svc server` keeps deployed apps' logs in <data dir>/logs across restarts.
  const deploymentLogs = new DeploymentLogs(options.state === 'memory' ? {} : { dir: path.join(config.dataDir, 'logs'), report: reportAs('LOGS') });
  await deploymentLogs.restore();
  const sink = recentLogs.sink(deploymentLogs.sink(logs));

  const artifacts = await artifactUrls(options, system);
  // Replicas sharing Consul KV elect one leader, the only one that runs deployments; on its own svc always leads.
  const electing = config.state === 'consul' && options.state === undefined;
  if (config.scheduler === 'nomad' && config.publicUrl === null) system(noPublicUrlWarning(electing));
  // The one cycle: the driver (container exits) and the replica sync (followers' load) report to the autoscaler, which is built on both.
  const toAutoscaler: { target?: Autoscaler } = {};
  const agents = watchAgents(config, system);
  const registry = createRegistry(config, quietWithoutConsul(agents, reportAs('REGISTRY')), metrics);
  // Watches that backed off while Consul was away read again as soon as it answers.
  if (registry instanceof ConsulRegistry) agents.consul?.onRecovered(() => registry.retryNow());
  const unitCompilerOptions: UnitCompilerOptions = {
    cluster: {
      datacenters: config.nomadDatacenters, region: config.nomadRegion, namespace: config.nomadNamespace, driver: config.nomadDriver, platform: config.imagePlatform,
      mhzPerCore: config.mhzPerCore, cpuMode: config.cpuMode, proxyTags: config.proxyTags, baseDomain: config.baseDomain, publicUrl: config.publicUrl,
      // raw_exec/exec run the image builder's environment, which sees the svc package through PYTHONPATH (as local containers do);
      // a docker image carries the package and its PYTHONPATH itself.
      runtimePath: config.nomadPython === null && config.nomadDriver !== 'docker' ? sdkPythonPath : null,
    },
    python: config.nomadPython,
    plugins,
    // The public URL when there is one: Nomad clients on other machines cannot reach 127.0.0.1.
    bundleUrl: (sha256) => artifacts!.url(config.publicUrl ?? state.url, sha256),
  };
  const scheduler = createDriver(config, {
    registry, logs: sink, zygotes, cgroupRoot: config.cgroupRoot,
    // `svc serve` (a state of its own) belongs to no installation: its jobs are never another svc's to purge, nor it theirs.
    install: options.state === undefined ? installOf(config) : undefined,
    onContainerExit: (unit, id, reason) => toAutoscaler.target?.containerExited(unit.key, id, reason),
    metrics,
    compile: createUnitCompiler(unitCompilerOptions),
  });
  const driver = detachable(scheduler);
  const images = createImageBuilder(config);
  if (images.name === 'oci') {
    system(`docker images: ${config.imageBase} plus svc's layers, for ${config.imagePlatform}, pushed to ${config.imageRegistry} ${config.imageRegistryUsername === null ? 'anonymously' : `as ${config.imageRegistryUsername}`}`);
  }

  const routes = new RouteTable();
  const upstreams = new UpstreamPools(registry, { crashCause: (instance) => driver.crashCause?.(instance) });
  const admission = new Admission(registry, { waitTimeoutMs: config.queueTimeoutSeconds * 1000 });
  // Replicas share the work: followers copy the leader's routes and report their load to its autoscaler.
  // Only with the Consul registry: a follower finds the instances there (the embedded one knows only this replica's).
  const sync = electing && config.registry === 'consul'
    ? new ReplicaSync({ store: controlPlane.store, routes, admission, registry, evaluate: (units) => toAutoscaler.target?.evaluate(units), report: quietWithoutConsul(agents, reportAs('REPLICAS')) })
    : null;
  const autoscaler = new Autoscaler({
    driver, admission, policy, fallback,
    logs: recentLogs,
    log: sink,
    emit: (event) => void plugins.parallel('onEvent', event),
    report: reportAs('AUTOSCALE'),
    leads: () => state.leader?.isLeader() ?? true,
    metrics,
    ...(sync === null ? {} : { peers: sync.peers }),
    ...options.autoscale,
  });
  toAutoscaler.target = autoscaler;
  if (sync !== null) {
    // In place of the autoscaler (it supervised admission from its constructor): on a follower, units it does not manage still wait.
    admission.supervise(replicaSupervisor({
      autoscaler,
      leads: () => state.leader?.isLeader() ?? false,
      notice: (unit, refused) => sync.notice(unit, refused),
      hasInstances: (unit) => registry.instances(unit).length > 0,
    }));
  }

  // Code runs from its bundle, extracted once per sha256 into the cache dir; bundles are kept in the data dir.
  const bundles = createCodeBundles({ dataDir: config.dataDir, cacheDir: config.cacheDir, python: config.python });
  const deployments = new DeploymentManager({
    plugins, images, driver, routes, baseUrl: () => state.url, baseDomain: config.baseDomain, bundles, autoscaler,
    records: new DeploymentRecords(controlPlane.store),
    logs: deploymentLogs,
    routable: async (unit) => {
      if (!(await untilInstances(registry, unit, ROUTABLE_WAIT_MS))) {
        system(`the gateway sees no instance of ${unit} ${ROUTABLE_WAIT_MS / 1000} s after its containers became healthy (is its Consul check passing?): its requests wait until one appears`);
      }
    },
    report: reportAs('RESTORE'),
    secrets: controlPlane.secrets,
    captureApi: async (unit, request) => {
      const instance = registry.instances(unit.key)[0];
      if (instance === undefined) return { capture: null, message: `no OpenAPI description: the gateway sees no container of it to read ${request.source} from` };
      return captureApi((options) => upstreams.request(instance, options), request);
    },
  });
  // Remote runs and API previews end when their clients leave them idle.
  const leases = new IdleLeases();
  const runs = new RunManager({ plugins, images, driver, bundles, autoscaler, admission, upstreams, logs: deploymentLogs, leases, report: reportAs('RUN'), secrets: controlPlane.secrets });
  // The leader runs the scheduled functions; on Nomad, Nomad runs their periodic jobs and svc keeps those registered.
  const nomad = config.scheduler === 'nomad' ? new NomadClient({ url: config.nomadAddr, token: config.nomadToken ?? undefined, namespace: config.nomadNamespace, region: config.nomadRegion, observe: metrics.observer('nomad') }) : null;
  const schedules: ScheduleLeader = nomad === null
    ? new ScheduleRunner({ deployments, runs, history: new ScheduleHistory(controlPlane.store), log: system, report: reportAs('SCHEDULE') })
    : new NomadPeriodicSchedules({
      deployments, images, client: nomad, compile: createUnitCompiler(unitCompilerOptions, compilePeriodicJob),
      install: options.state === undefined ? installOf(config) : undefined, secrets: controlPlane.secrets, log: system, report: reportAs('SCHEDULE'),
    });
  const previews = new Previews({
    deployments, logs: deploymentLogs, leases,
    load: (unit) => ({
      ...admission.load(unit),
      lastActiveAt: Math.max(0, ...registry.instances(unit).map((instance) => admission.use(instance.id).lastActiveAt ?? 0)) || undefined,
    }),
    report: reportAs('PREVIEW'),
  });

  const metricsPage = metricsRoute({ metrics, plugins, accounts: controlPlane.accounts });
  metrics.readUnits(() => unitReadings(routes, admission, driver));
  // A unit no longer served keeps its series (counters only grow), not its cached meter.
  routes.onChange(() => metrics.keepMeters(new Set(routes.entries().map((entry) => entry.unit))));
  const api = controlPlaneRoutes({
    plugins, controlPlane, deployments, bundles, maxBundleBytes: options.maxBundleBytes ?? DEFAULT_MAX_BUNDLE_BYTES, autoscaler,
    logs: deploymentLogs, runs, previews, scheduledRuns: nomad === null ? null : new NomadRunSource(nomad), ...(nomad === null ? {} : { checkSchedules: checkNomadSchedules }), maxCallBytes: config.maxBodyBytes, publicUrl: config.publicUrl, domains,
    ...(artifacts === null ? {} : { artifacts }),
  });
  const gateway = createGateway({
    routes, upstreams, admission, plugins, report, metrics, maxBodyBytes: config.maxBodyBytes,
    platformRoutes: (ctx, next) => healthRoute(ctx, () => metricsPage(ctx, () => api(ctx, next))),
    rawPlatformRoute: createCallRoute({ runs, plugins, maxCallBytes: config.maxBodyBytes }, { report, trustProxy: config.trustProxy }),
    // Without Consul the routes and instances are what svc last knew: answers say so.
    staleSince: () => agents.consul?.outage()?.since ?? null,
    trustProxy: config.trustProxy,
  });
  const role = (): ReplicaRole => state.leaderRole ?? (sync?.synced() ? 'following' : 'standby');
  const forward = createLeaderForward({ leaderAddress: () => state.leader?.leaderAddress() ?? null, self: () => state.self });
  const gate = createReplicaGate({ role, routes, forward, servesWhileStarting: () => sync?.tookOverWithCopy() ?? false, outages: () => outagesOf(agents) });
  const websockets = createWebSocketBridge({ routes, admission, plugins, report, trustProxy: config.trustProxy });
  const listeners = createListeners({
    config, certificates, report, log: system,
    handlers: {
      request: (req, res) => {
        if (!gate.request(req, res)) void gateway.handleRequest(req, res);
      },
      upgrade: (req, socket, head) => {
        if (!gate.upgrade(req, socket)) websockets.handleUpgrade(req, socket, head);
      },
      clientError: answerClientError,
    },
    // The CA fetches HTTP-01 challenges over plain HTTP: the plain listener answers them.
    challenge: acme?.challenge ?? null,
  });

  // Last: a start that failed above leaves no probe running.
  agents.consul?.start();
  agents.nomad?.start();
  acme?.start();
  return {
    plugins, logs, report, deploymentLogs, registry, scheduler, driver, images, admission, upstreams, sync, autoscaler,
    deployments, leases, runs, schedules, previews, forward, websockets, listeners, electing, role, agents, acme, metrics,
  };
}

/**
 * A reporter that keeps quiet while Consul is known to be away: the outage's own log line
 * says it once, where every watch, renewal and retry would say it again and again.
 */
export function quietWithoutConsul(agents: AgentWatches, report: (error: unknown) => void): (error: unknown) => void {
  return (error) => {
    if (agents.consul?.outage() == null) report(error);
  };
}

/** The agents svc cannot reach now, by their name in `/_svc/ready`. */
function outagesOf(agents: AgentWatches): Record<string, Outage> {
  const outages: Record<string, Outage> = {};
  for (const [name, watch] of Object.entries(agents)) {
    const outage = (watch as AgentWatch | null)?.outage();
    if (outage) outages[name] = outage;
  }
  return outages;
}

/** Nomad clients fetch each bundle through a signed URL: they hold no svc token. Null when nothing downloads bundles. */
async function artifactUrls(options: PlatformOptions, warn: (text: string) => void): Promise<ArtifactUrls | null> {
  const { config } = options;
  if (options.artifactSecret === undefined && config.scheduler !== 'nomad') return null;
  return createArtifactUrls({ secret: options.artifactSecret ?? await artifactSecret({ dataDir: config.dataDir, env: process.env, warn }) });
}

/**
 * Without a public URL each replica signs bundle URLs with its own address: a
 * new leader re-registers every job with another artifact source, and Nomad
 * replaces each running allocation for it (an artifact change is destructive).
 */
function noPublicUrlWarning(electing: boolean): string {
  const reach = 'no publicUrl: Nomad tasks download their code from the address svc listens on, which only Nomad clients on this machine reach';
  const replicas = electing ? '; with several replicas, each one names its own address, so a take-over re-registers every job and Nomad restarts every allocation' : '';
  return `${reach}${replicas}; set SVC_PUBLIC_URL (or publicUrl) to an address every client reaches (a load balancer in front of the replicas)`;
}
