/**
 * What answers on the platform's ports: the control-plane API, `/metrics`
 * and the call route beside the gateway, the WebSocket bridge, the replica
 * gate in front of them (a follower forwards the API to the leader), and the
 * listeners, not listening yet.
 */
import { createCallRoute } from '../http/api/call-route.js';
import { createTerminalSockets, type TerminalSockets } from '../http/api/terminal-socket.js';
import type { ApiServices } from '../http/api/types.js';
import { controlPlaneRoutes } from '../http/control-plane-routes.js';
import { DEFAULT_MAX_BUNDLE_BYTES } from '../http/api/index.js';
import type { ArtifactUrls } from '../infra/bundles/artifact-url.js';
import type { AgentWatch, Outage } from '../traffic/cluster/agent-watch.js';
import type { AgentWatches } from './agent-watches.js';
import { createLeaderForward, type LeaderForward } from '../traffic/cluster/leader-forward.js';
import { createReplicaGate, type ReplicaRole } from '../traffic/cluster/replica-gate.js';
import type { DomainDirectory } from '../model/domains/types.js';
import { createGateway } from '../traffic/gateway/app.js';
import { answerClientError, healthRoute } from '../traffic/gateway/http-server.js';
import { createListeners, type Listeners } from '../traffic/gateway/listeners.js';
import type { Certificates } from '../traffic/gateway/tls/certificates.js';
import type { AcmeCertificates } from '../traffic/gateway/tls/acme.js';
import { createWebSocketBridge, type WebSocketBridge } from '../traffic/gateway/websocket-bridge.js';
import type { DeploymentLogs } from '../infra/logs/deployment-logs.js';
import { metricsRoute } from '../http/metrics/metrics-route.js';
import { gpuReading, unitReadings } from '../traffic/gateway/unit-readings.js';
import { gpuUsageReader } from '../infra/gpus/gpu-usage.js';
import type { Backends } from './platform-backends.js';
import type { Scaling } from './platform-scaling.js';
import type { Wiring } from './platform-wiring.js';
import type { WorkloadServices } from './platform-workloads.js';
import type { PluginHost } from '../infra/plugin/host.js';
import { NomadRunSource } from '../services/schedules/nomad-runs.js';
import { checkNomadSchedules } from '../services/schedules/nomad-periodic.js';

export interface FrontNeeds {
  readonly plugins: PluginHost;
  readonly agents: AgentWatches;
  readonly backends: Backends;
  readonly scaling: Scaling;
  readonly workloads: WorkloadServices;
  readonly deploymentLogs: DeploymentLogs;
  readonly artifacts: ArtifactUrls | null;
  readonly domains: DomainDirectory | null;
  readonly certificates: Certificates | null;
  readonly acme: AcmeCertificates | null;
}

export interface Front {
  readonly forward: LeaderForward;
  readonly websockets: WebSocketBridge;
  /** `svc shell`'s terminals in containers. */
  readonly terminals: TerminalSockets;
  readonly listeners: Listeners;
  role(): ReplicaRole;
}

export function buildFront(wiring: Wiring, needs: FrontNeeds): Front {
  const { config, controlPlane, state, metrics, report, system } = wiring;
  const { plugins, agents, workloads } = needs;
  const { routes, admission, sync } = needs.scaling;
  const metricsPage = metricsRoute({ metrics, plugins, accounts: controlPlane.accounts });
  metrics.readUnits(() => unitReadings(routes, admission, needs.backends.driver));
  const gpuUsage = needs.backends.gpus === null ? null : gpuUsageReader(needs.backends.gpus);
  metrics.gpus.read(() => gpuReading(routes, needs.backends.driver, gpuUsage));
  // A unit no longer served keeps its series (counters only grow), not its cached meter.
  routes.onChange(() => metrics.keepMeters(new Set(routes.entries().map((entry) => entry.unit))));
  const apiServices = apiServicesOf(wiring, needs);
  const api = controlPlaneRoutes(apiServices);
  const terminals = createTerminalSockets(apiServices);
  const gateway = createGateway({
    routes,
    upstreams: needs.scaling.upstreams,
    admission,
    plugins,
    report,
    metrics,
    maxBodyBytes: config.maxBodyBytes,
    platformRoutes: (ctx, next) => healthRoute(ctx, () => metricsPage(ctx, () => api(ctx, next))),
    rawPlatformRoute: createCallRoute(
      { runs: workloads.runs, plugins, maxCallBytes: config.maxBodyBytes },
      { report, trustProxy: config.trustProxy },
    ),
    // Without Consul the routes and instances are what svc last knew: answers say so.
    staleSince: () => agents.consul?.outage()?.since ?? null,
    trustProxy: config.trustProxy,
    deferral: workloads.deferral,
  });
  const role = (): ReplicaRole => state.leaderRole ?? (sync?.synced() ? 'following' : 'standby');
  const forward = createLeaderForward({ leaderAddress: () => state.leader?.leaderAddress() ?? null, self: () => state.self });
  const gate = createReplicaGate({
    role,
    routes,
    forward,
    servesWhileStarting: () => sync?.tookOverWithCopy() ?? false,
    outages: () => outagesOf(agents),
  });
  const websockets = createWebSocketBridge({ routes, admission, plugins, report, trustProxy: config.trustProxy });
  const listeners = createListeners({
    config,
    certificates: needs.certificates,
    report,
    log: system,
    handlers: {
      request: (req, res) => {
        if (!gate.request(req, res)) void gateway.handleRequest(req, res);
      },
      upgrade: (req, socket, head) => {
        if (gate.upgrade(req, socket)) return;
        if (terminals.handles(req)) terminals.handleUpgrade(req, socket, head);
        else websockets.handleUpgrade(req, socket, head);
      },
      clientError: answerClientError,
    },
    // The CA fetches HTTP-01 challenges over plain HTTP: the plain listener answers them.
    challenge: needs.acme?.challenge ?? null,
  });
  return { forward, websockets, terminals, listeners, role };
}

/** What the API and the dashboard answer from: the platform's services, as each route sees them. */
function apiServicesOf(wiring: Wiring, needs: FrontNeeds): ApiServices {
  const { config, options, controlPlane } = wiring;
  const { plugins, workloads } = needs;
  const { nomad, runs, volumes } = workloads;
  return {
    plugins,
    controlPlane,
    deployments: workloads.deployments,
    bundles: workloads.bundles,
    maxBundleBytes: options.maxBundleBytes ?? DEFAULT_MAX_BUNDLE_BYTES,
    autoscaler: needs.scaling.autoscaler,
    quotas: needs.scaling.quotas,
    lastHour: wiring.metrics.lastHour,
    containers: needs.backends.driver,
    logs: needs.deploymentLogs,
    runs,
    calls: workloads.calls,
    callGroups: workloads.callGroups,
    maps: workloads.maps,
    previews: workloads.previews,
    scheduledRuns: nomad === null ? null : new NomadRunSource(nomad),
    ...(nomad === null ? {} : { checkSchedules: checkNomadSchedules }),
    maxCallBytes: config.maxBodyBytes,
    volumes,
    maxVolumeFileBytes: config.volumeMaxBytes,
    usagePrices: config.usagePrices,
    usageRetentionDays: config.usageRetentionDays,
    publicUrl: config.publicUrl,
    domains: needs.domains,
    ...(needs.artifacts === null ? {} : { artifacts: needs.artifacts }),
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
