/**
 * Starts the platform from its configuration: opens the state, builds every
 * object (core/platform/platform-services.ts), then starts them: the server listens,
 * and this svc restores its deployments, or on a cluster joins the election
 * among replicas (only the leader runs deployments and scales).
 */
import type { UsageMeter } from '../services/usage/usage-meter.js';
import { startMetricsListener } from '../http/metrics/metrics-listener.js';
import { METRICS_PATH } from '../http/metrics/metrics-route.js';
import { PlatformMetrics } from '../infra/metrics/platform-metrics.js';
import type { AddressInfo } from 'node:net';
import type { RunManager } from '../services/runs/runs.js';
import type { ServerConfig } from '../../config/schema.js';
import { openControlPlane, type ControlPlane } from '../http/api/control-plane.js';
import type { Autoscaler } from '../services/autoscale/controller.js';
import { ensureOwnerToken, type OwnerToken } from '../services/auth/owner-token.js';
import { ensureWritableDir } from '../infra/files/writable-dir.js';
import { defaultAdvertiseUrl } from '../traffic/cluster/advertise.js';
import type { AgentWatches } from './agent-watches.js';
import { startLeadership } from '../traffic/cluster/leadership.js';
import type { ReplicaRole } from '../traffic/cluster/replica-gate.js';
import type { LeaderElection } from '../traffic/cluster/types.js';
import { parseUnitKey } from '../model/deployment-keys.js';
import type { DeploymentManager } from '../services/deployments/manager.js';
import { SvcError } from '../model/errors.js';
import type { ErrorReporter } from '../traffic/gateway/error-middleware.js';
import { baseUrl, SERVER_DRAIN_MS } from '../traffic/gateway/http-server.js';
import type { DeploymentLogs } from '../infra/logs/deployment-logs.js';
import type { PluginHost } from '../infra/plugin/host.js';
import type { PlatformOptions } from './platform-options.js';
import { buildServices, type Services } from './platform-services.js';
import { quietWithoutConsul, type PlatformState } from './platform-wiring.js';
import type { ServiceRegistry } from '../infra/registry/types.js';
import type { LocalDriver } from '../infra/scheduler/local/driver.js';
import type { NomadDriver } from '../infra/scheduler/nomad/types.js';

export { DEFAULT_WORKSPACE } from '../model/workload/deployment-ref.js';
export type { PlatformOptions } from './platform-options.js';

export interface Platform {
  readonly config: ServerConfig;
  /** Base URL of the gateway (after listening, with the real port); https:// with TLS. */
  readonly url: string;
  /** Where Prometheus scrapes without a token (`metricsAddress`): `http://127.0.0.1:9464/metrics`; null without that listener. */
  readonly metricsUrl: string | null;
  /** The plain-HTTP listener beside HTTPS (`httpPort`): its URL, and whether it only redirects to HTTPS; null without one. */
  readonly plainHttp: { readonly url: string; readonly redirects: boolean } | null;
  readonly ownerToken: { readonly secret: string; readonly path: string; readonly created: boolean; readonly warnings: readonly string[] };
  /** Workspaces, accounts, tokens, sign-in links and the device flow, on the state store. */
  readonly controlPlane: ControlPlane;
  /** The owner's one-time dashboard sign-in link (`<url>/login#<secret>`), only on the start that created the owner account. */
  readonly signInLink: { readonly url: string; readonly expiresAt: string } | null;
  readonly plugins: PluginHost;
  readonly deployments: DeploymentManager;
  /** Healthy containers, for operators' tools and benchmarks. */
  readonly registry: ServiceRegistry;
  /** The config's scheduler driver: `local` (processes here) or `nomad`. */
  readonly driver: LocalDriver | NomadDriver;
  /** The leader election among replicas sharing Consul KV (`state: consul`); null otherwise (always leads). */
  readonly leader: LeaderElection | null;
  /**
   * `standby` (no route copy yet, or demoted: 503 not_leader), `following` (another replica leads: serves
   * its routes, forwards the API to it), `starting` (leads, restoring), `ready` (leads and serves),
   * `stranded` (led until Consul stopped answering: serves its routes, 503 not_leader for the rest).
   */
  readonly role: ReplicaRole;
  /** Scaling and crash state of each deployed unit, with its last log lines (`status(unitKey)`). */
  readonly autoscaler: Autoscaler;
  /** Remote runs (`.remote()`, `svc run`), for tools and tests that call or map them directly. */
  readonly runs: RunManager;
  /** What each workload's containers use, kept by the hour (`svc usage`); `sample()` reads them now. */
  readonly usage: UsageMeter;
  /** Every deployment's log lines, across its versions (what the logs API reads and follows). */
  readonly deploymentLogs: DeploymentLogs;
  /** Whether svc reaches the Consul and Nomad agents its config names (null: not used). */
  readonly agents: AgentWatches;
  /**
   * Stops serving, then the server. Safe to call twice. Local containers
   * stop with svc; Nomad jobs keep running (`keepWorkloads`, default with
   * `scheduler: nomad`): the next leader restores the deployments and purges
   * the jobs it does not run itself.
   */
  close(options?: { readonly keepWorkloads?: boolean }): Promise<void>;
}

export async function startPlatform(options: PlatformOptions): Promise<Platform> {
  const report: ErrorReporter = options.report ?? ((error) => console.error(error));
  checkNotStopped(options.signal);
  // First: a data dir svc cannot write (read-only, not its own, a full disk) is refused saying which.
  await ensureWritableDir(options.config.dataDir, 'data dir');
  const owner = await ensureOwnerToken(options.config.dataDir);
  checkNotStopped(options.signal);
  const state: PlatformState = { url: '', self: '', leader: null, leaderRole: null, metricsListener: null };
  // Before anything listens: a second `svc server` on this data dir stops here with state_locked.
  const { config } = options;
  const metrics = new PlatformMetrics();
  const controlPlane = await openControlPlane({
    dataDir: config.dataDir,
    state: options.state ?? config.state,
    consul: {
      address: config.consulAddr,
      prefix: config.consulPrefix,
      ...(config.consulToken === null ? {} : { token: config.consulToken }),
    },
    ownerSecret: owner.secret,
    secretsKeys: { secretsKey: config.secretsKey, secretsKeyFile: config.secretsKeyFile },
    verificationUri: () => `${state.url}/device`,
    report: (error) => report(error, { method: 'STATE', path: '', requestId: undefined }),
    metrics,
  });
  try {
    checkNotStopped(options.signal);
    const services = await buildServices(options, controlPlane, state, metrics);
    return await start(options, owner, controlPlane, services, state);
  } catch (error) {
    await controlPlane.close();
    throw error;
  }
}

/** Listens, then restores the deployments, or joins the election among replicas that decides who does. */
async function start(
  options: PlatformOptions,
  owner: OwnerToken,
  controlPlane: ControlPlane,
  services: Services,
  state: PlatformState,
): Promise<Platform> {
  if (!services.electing) state.leaderRole = 'starting';
  const url = await listen(options, services, state);
  if (services.electing) joinElection(options, services, state);
  else await restoreAlone(options, services, state);
  return platformOf(options, owner, controlPlane, services, state, url);
}

/** The gateway (and the metrics listener) listen; returns the gateway's URL. Whatever fails stops what was built. */
async function listen(options: PlatformOptions, services: Services, state: PlatformState): Promise<string> {
  const { config } = options;
  const { listeners, sync, report, logs } = services;
  try {
    await listeners.listen(config.host, config.port);
  } catch (error) {
    // A port in use: what was built stops again (the caller closes the store).
    await stop(services, state);
    throw error;
  }
  try {
    if (config.metricsAddress !== null) state.metricsListener = await startMetricsListener(config.metricsAddress, services.metrics, report);
  } catch (error) {
    await stop(services, state);
    throw error;
  }
  const address = listeners.main.address() as AddressInfo;
  const url = config.publicUrl ?? baseUrl(address, listeners.secure);
  state.url = url;
  state.self = config.advertiseUrl ?? defaultAdvertiseUrl(address, undefined, listeners.secure);
  if (sync !== null && config.advertiseUrl === null) {
    logs({
      unit: '',
      container: '',
      stream: 'system',
      time: new Date(),
      text: `this replica tells the others it is at ${state.self} (where followers forward the API while it leads); set SVC_ADVERTISE_URL (advertiseUrl) if they reach it elsewhere`,
    });
  }
  return url;
}

/**
 * What this svc does once it leads (`lost` aborts when it stops leading):
 * deployed apps come back as they were (running ones start again, paused
 * and stopped ones stay down), and it runs the scheduled functions.
 */
async function takeOver(options: PlatformOptions, services: Services, lost: AbortSignal | undefined): Promise<void> {
  const { deployments, deploymentLogs, scheduler, sync } = services;
  checkNotStopped(lost);
  // The quotas as the last leader left them, before anything scales.
  await services.quotas.start();
  // A follower that wins stops copying routes; the copies serve on while it restores its own.
  await sync?.stopFollowing();
  // The units the copies name are the old leader's running jobs: restored under the same keys, they keep running.
  await deployments.restore(sync === null ? undefined : (ref, workload) => sync.copiedUnit(ref, workload));
  checkNotStopped(lost);
  // Stored logs of deployments that do not exist (svc stopped between an app's delete and its files) go now.
  deploymentLogs.forgetAllBut(
    (key) =>
      deployments.get({ workspace: key.workspace, app: key.app, stage: 'deployed' })?.workloads.some((w) => w.name === key.workload) ??
      false,
  );
  // Before the purge: followers switch to this replica's routes while the old jobs still serve.
  if (sync !== null && lost !== undefined) await sync.lead(lost);
  // This installation's jobs that no deployment of this svc runs: a previous leader's, or a crashed svc's.
  // `svc serve` (state: memory) owns no installation: it never purges.
  if ('purgeUnknownJobs' in scheduler && options.state === undefined) {
    await scheduler.purgeUnknownJobs((key) => keepOldJob(deployments, key)).catch(reportAs(services, 'RESTORE'));
    checkNotStopped(lost);
  }
  // The leader runs the scheduled functions (on Nomad: keeps their periodic jobs registered).
  services.schedules.lead(lost ?? new AbortController().signal);
  // And the spawned calls: the ones a previous leader (or this svc before a restart) left first.
  services.callExecutor.lead(lost ?? new AbortController().signal);
}

/** Until it leads, a replica follows: it serves the leader's routes and forwards the rest to it; then it restores the deployments and serves. */
function joinElection(options: PlatformOptions, services: Services, state: PlatformState): void {
  const { config } = options;
  const { driver, sync, logs } = services;
  sync?.follow();
  state.leader = startLeadership({
    consul: {
      address: config.consulAddr,
      ...(config.consulToken === null ? {} : { token: config.consulToken }),
      observe: services.metrics.observer('consul'),
    },
    key: `${config.consulPrefix}leader`,
    advertise: state.self,
    takeOver: (lost) => takeOver(options, services, lost),
    setRole: (next) => (state.leaderRole = next),
    // The new leader runs the workloads (and publishes the routes) now: stopping them here would take its adopted jobs down.
    letGo: () => {
      driver.detach();
      void sync?.letGo();
    },
    log: (text) => logs({ unit: '', container: '', stream: 'system', text, time: new Date() }),
    report: quietWithoutConsul(services.agents, reportAs(services, 'LEADER')),
    ...(options.onLeadershipLost ? { onLeadershipLost: options.onLeadershipLost } : {}),
  });
}

/** On its own svc always leads: it restores the deployments now, and is ready once they are back. */
async function restoreAlone(options: PlatformOptions, services: Services, state: PlatformState): Promise<void> {
  const { signal } = options;
  // A stop meanwhile cuts the restore short: the shutdown refuses to start anything more.
  const cutRestore = () => void services.deployments.shutdown().catch(() => {}); // stop() reports its failure
  signal?.addEventListener('abort', cutRestore, { once: true });
  try {
    await takeOver(options, services, signal);
    state.leaderRole = 'ready';
  } catch (error) {
    // A start that fails (a record it cannot read) or is stopped leaves nothing listening or running; the caller closes the store.
    await stop(services, state);
    throw error;
  } finally {
    signal?.removeEventListener('abort', cutRestore);
  }
}

/** The started platform as its callers see it, and how it closes. */
function platformOf(
  options: PlatformOptions,
  owner: OwnerToken,
  controlPlane: ControlPlane,
  services: Services,
  state: PlatformState,
  url: string,
): Platform {
  const { config } = options;
  const { listeners, deployments, deploymentLogs, scheduler, driver, sync } = services;
  let closing: Promise<void> | undefined;
  const plain = listeners.plain?.address() as AddressInfo | undefined;
  return {
    config,
    url,
    plainHttp: plain === undefined ? null : { url: baseUrl(plain), redirects: config.httpsRedirect },
    metricsUrl: state.metricsListener === null ? null : `${state.metricsListener.url}${METRICS_PATH}`,
    ownerToken: {
      secret: owner.secret,
      path: owner.path,
      created: owner.created,
      warnings: [...owner.warnings, ...ownerTokenWarnings(controlPlane, owner.path)],
    },
    controlPlane,
    signInLink: controlPlane.firstSignIn && {
      url: `${url}/login#${controlPlane.firstSignIn.secret}`,
      expiresAt: controlPlane.firstSignIn.expiresAt,
    },
    plugins: services.plugins,
    deployments,
    registry: services.registry,
    driver: scheduler,
    get leader() {
      return state.leader;
    },
    get role() {
      return services.role();
    },
    autoscaler: services.autoscaler,
    runs: services.runs,
    usage: services.usage,
    deploymentLogs,
    agents: services.agents,
    close(closeOptions = {}) {
      // On Nomad a server's workloads outlive it: the next leader takes them over (a restart, a rolling update of svc).
      // `svc serve`'s own (state: memory) belong to nobody else: they stop with it.
      if (closeOptions.keepWorkloads ?? (scheduler.name === 'nomad' && options.state === undefined)) {
        driver.detach();
        // Followers keep serving the routes as they are: the drain's offline routes are not published.
        void sync?.letGo();
      }
      closing ??= (async () => {
        await stop(services, state);
        // Last: nothing is left that could write to the store.
        await controlPlane.close();
      })();
      return closing;
    },
  };
}

/** A reporter for failures of one background job, named like a request method in the report. */
function reportAs(services: Services, method: string): (error: unknown) => void {
  return (error) => services.report(error, { method, path: '', requestId: undefined });
}

/** Stops everything `buildServices` built, in the order that lets requests in flight finish. */
async function stop(services: Services, state: PlatformState): Promise<void> {
  const {
    leases,
    previews,
    websockets,
    deployments,
    runs,
    autoscaler,
    sync,
    forward,
    admission,
    driver,
    upstreams,
    registry,
    deploymentLogs,
    listeners,
    agents,
  } = services;
  const reportClose = reportAs(services, 'CLOSE');
  leases.close();
  previews.close();
  await services.usage.stop();
  services.quotas.stop();
  // WebSocket sessions first: they would hold their containers' drain until its timeout.
  websockets.close();
  services.terminals.close();
  // Started first: from its first (synchronous) step every workload URL answers shutting_down while requests in flight finish.
  const deploymentsDown = deployments.shutdown().catch(reportClose);
  // No tick starts from now on; scheduled runs in flight give their calls up as their runs end.
  const schedulesDown = services.schedules.close().catch(reportClose);
  // Calls in flight are given up and stay `running`: the next start runs them again.
  const callsDown = services.callExecutor.close().catch(reportClose);
  await runs.shutdown().catch(reportClose);
  // The runs' end cancelled their maps; what their retention timers hold goes.
  services.maps.close();
  await schedulesDown;
  await callsDown;
  await deploymentsDown;
  autoscaler.close();
  await state.leader?.close();
  await sync?.close();
  forward.close();
  admission.close();
  await driver.close();
  await services.images.close?.();
  await upstreams.close();
  await registry.close();
  await Promise.all([agents.consul?.close(), agents.nomad?.close()]);
  services.acme?.close();
  // Log followers end their streams: they would hold the drain until its bound.
  await deploymentLogs.close();
  await Promise.all([listeners.close(SERVER_DRAIN_MS), state.metricsListener?.close()]);
  services.metrics.close();
}

/**
 * Whether a job this svc did not submit stays: only one whose workload this
 * svc could not start again after the take-over (its bundle or image is
 * missing here): it is what still serves that workload. Jobs of deleted,
 * paused or stopped deployments, of previews and of runs go.
 */
function keepOldJob(deployments: DeploymentManager, key: string): boolean {
  const ref = parseUnitKey(key);
  if (ref === undefined || ref.stage !== 'deployed') return false;
  const workload = deployments
    .get({ workspace: ref.workspace, app: ref.app, stage: ref.stage })
    ?.workloads.find((w) => w.name === ref.workload);
  return workload?.status === 'failed';
}

/** Throws `shutting_down` once the start's signal is aborted. */
function checkNotStopped(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new SvcError('shutting_down', 'svc was stopped while it started.');
}

/** What the operator must know about the owner token's record: a revoked one no longer works. */
function ownerTokenWarnings(controlPlane: ControlPlane, file: string): string[] {
  if (controlPlane.ownerTokenStatus !== 'revoked') return [];
  return [`the owner token in ${file} was revoked and no longer works; delete the file and restart svc to get a new one.`];
}
