/**
 * Wires the platform from its configuration: plugins (token auth first),
 * registry, scheduler driver, image builder, deployments and the gateway,
 * all in this one process. The embedded default: local processes, an
 * in-process registry, files in the data dir. On a cluster (`scheduler:
 * nomad`, `state: consul`): Nomad jobs, the Consul registry, Consul KV, and
 * a leader election among replicas (only the leader scales).
 */
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Middleware } from 'koa';
import type { ServerConfig } from '../config/schema.js';
import type { Duplex } from 'node:stream';
import { SvcError } from './errors.js';
import { writeRawError } from './gateway/raw-error.js';
import { authTokenPlugin } from '../plugins/auth-token/index.js';
import { autoscaleQueueDepthPlugin, queueDepth } from '../plugins/autoscale-queue-depth/index.js';
import { exportPythonPlugin } from '../plugins/export-python/index.js';
import { Autoscaler, type AutoscalerOptions } from './autoscale/controller.js';
import { resolvePolicy } from './autoscale/policy.js';
import { DeploymentLogs } from './logs/deployment-logs.js';
import { RecentLogs } from './logs/recent-logs.js';
import { ensureOwnerToken } from './auth/owner-token.js';
import { artifactSecret, createArtifactUrls } from './bundles/artifact-url.js';
import { createCodeBundles } from './bundles/service.js';
import { openControlPlane, type ControlPlane, type StateKind } from './api/control-plane.js';
import { controlPlaneRoutes, DEFAULT_MAX_BUNDLE_BYTES } from './api/index.js';
import type { OwnerToken } from './auth/owner-token.js';
import { DeploymentManager } from './deployments/manager.js';
import { DeploymentRecords } from './deployments/records.js';
import { IdleLeases } from './runs/idle-leases.js';
import { Previews } from './runs/previews.js';
import { RunManager } from './runs/runs.js';
import { createGateway } from './gateway/app.js';
import { createWebSocketBridge } from './gateway/websocket-bridge.js';
import type { ErrorReporter } from './gateway/error-middleware.js';
import { Admission } from './gateway/admission.js';
import { UpstreamPools } from './gateway/proxy.js';
import { RouteTable } from './gateway/route-table.js';
import { createImageBuilder } from './images/choose-builder.js';
import { createPluginHost, type PluginHost } from './plugin/host.js';
import { loadPlugins, resolvePlugins } from './plugin/load.js';
import type { ServiceRegistry } from './registry/types.js';
import type { LocalDriver } from './scheduler/local/driver.js';
import type { NomadDriver } from './scheduler/nomad/types.js';
import { createUnitCompiler } from './scheduler/nomad/unit-compiler.js';
import type { LogSink } from './scheduler/types.js';
import { createDriver, createRegistry, installOf } from './cluster/backends.js';
import { startLeadership } from './cluster/leadership.js';
import type { LeaderElection } from './cluster/types.js';
import { detachable } from './cluster/detachable-driver.js';
import { createReplicaGate, type ReplicaRole } from './cluster/replica-gate.js';
import { createLeaderForward } from './cluster/leader-forward.js';
import { replicaSupervisor } from './cluster/replica-supervisor.js';
import { ReplicaSync } from './cluster/replica-sync.js';
import { defaultAdvertiseUrl } from './cluster/advertise.js';
import { sdkPythonPath } from './paths.js';
import { parseUnitKey } from '../jobs/names.js';

import { DEFAULT_WORKSPACE } from './deployments/keys.js';

export { DEFAULT_WORKSPACE };

export interface PlatformOptions {
  readonly config: ServerConfig;
  /** Receives every container log line. */
  readonly logs?: LogSink;
  /** Receives unexpected errors (bugs), with the request they happened in. */
  readonly report?: ErrorReporter;
  /** Autoscaler timing (tick, crash back-off, drain timeout); tests shorten it. */
  readonly autoscale?: Pick<AutoscalerOptions, 'tickMs' | 'crash' | 'drainTimeoutMs'>;
  /**
   * Where workspaces, accounts and tokens live, instead of the config's `state`:
   * `memory` keeps nothing, so that several `svc serve` previews can share a data dir.
   */
  readonly state?: StateKind;
  /**
   * Containers fork from a warm zygote of their image instead of starting a
   * new interpreter (`svc serve` turns it on for fast reloads); default off.
   */
  readonly zygotes?: boolean;
  /**
   * The key that signs bundle download URLs for Nomad's artifacts; default:
   * SVC_ARTIFACT_SECRET, else `<data dir>/artifact-signing.key` (only with `scheduler: nomad`).
   */
  readonly artifactSecret?: Buffer;
  /** Largest bundle the API accepts (DEFAULT_MAX_BUNDLE_BYTES); tests lower it. */
  readonly maxBundleBytes?: number;
  /**
   * Stops the start (SIGTERM while svc starts): the start takes no further
   * step, cuts the restore short as `Platform#close()` would (no unit starts
   * after the abort, requests in flight finish, the units it started stop),
   * closes the state store and rejects with `shutting_down`.
   */
  readonly signal?: AbortSignal;
  /**
   * Called when this replica loses the leadership (`state: consul`). It has let
   * go of the workloads and answers as a standby; `svc server` exits then, so
   * that its supervisor (Nomad) starts it again as a fresh follower.
   */
  readonly onLeadershipLost?: (reason: string) => void;
}

export interface Platform {
  readonly config: ServerConfig;
  /** Base URL of the gateway (after listening, with the real port). */
  readonly url: string;
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
   * its routes, forwards the API to it), `starting` (leads, restoring), `ready` (leads and serves).
   */
  readonly role: ReplicaRole;
  /** Scaling and crash state of each deployed unit, with its last log lines (`status(unitKey)`). */
  readonly autoscaler: Autoscaler;
  /** Every deployment's log lines, across its versions (what the logs API reads and follows). */
  readonly deploymentLogs: DeploymentLogs;
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
  const owner = await ensureOwnerToken(options.config.dataDir);
  checkNotStopped(options.signal);
  const base = { url: '' }; // known once the server listens; only requests read it
  // Before anything listens: a second `svc server` on this data dir stops here with state_locked.
  const { config } = options;
  const controlPlane = await openControlPlane({
    dataDir: config.dataDir,
    state: options.state ?? config.state,
    consul: { address: config.consulAddr, prefix: config.consulPrefix, ...(config.consulToken === null ? {} : { token: config.consulToken }) },
    ownerSecret: owner.secret,
    verificationUri: () => `${base.url}/device`,
    report: (error) => report(error, { method: 'STATE', path: '', requestId: undefined }),
  });
  try {
    checkNotStopped(options.signal);
    return await startServices(options, owner, controlPlane, base);
  } catch (error) {
    await controlPlane.close();
    throw error;
  }
}

async function startServices(options: PlatformOptions, owner: OwnerToken, controlPlane: ControlPlane, base: { url: string }): Promise<Platform> {
  const { config } = options;
  const logs: LogSink = options.logs ?? (() => {});
  const report: ErrorReporter = options.report ?? ((error) => console.error(error));
  const { verifier } = controlPlane;
  const userPlugins = await loadPlugins([...config.plugins], { cwd: process.cwd() });
  const plugins = createPluginHost(resolvePlugins({ builtins: [authTokenPlugin({ verifier }), autoscaleQueueDepthPlugin(), exportPythonPlugin()], user: userPlugins }), {
    onParallelError: (error) => report(error, { method: 'EVENT', path: '', requestId: undefined }),
  });

  // Before anything starts: an unknown policy name is a config error listing the known ones.
  const policy = resolvePolicy(plugins.scalingPolicies, config.scalingPolicy);
  const recentLogs = new RecentLogs();
  // Each line also goes to its deployment's history (across versions), which the logs API reads and follows.
  const deploymentLogs = new DeploymentLogs(
    // `svc serve` keeps nothing in the data dir; `svc server` keeps deployed apps' logs in <data dir>/logs across restarts.
    options.state === 'memory' ? {} : { dir: path.join(config.dataDir, 'logs'), report: (error) => report(error, { method: 'LOGS', path: '', requestId: undefined }) },
  );
  await deploymentLogs.restore();
  const sink = recentLogs.sink(deploymentLogs.sink(logs));

  // Nomad clients fetch each bundle through a signed URL: they hold no svc token.
  const artifacts = options.artifactSecret !== undefined || config.scheduler === 'nomad'
    ? createArtifactUrls({ secret: options.artifactSecret ?? await artifactSecret({ dataDir: config.dataDir, env: process.env, warn: (text) => logs({ unit: '', container: '', stream: 'system', text, time: new Date() }) }) })
    : null;
  if (config.scheduler === 'nomad' && config.publicUrl === null) {
    logs({ unit: '', container: '', stream: 'system', time: new Date(), text: 'no publicUrl: Nomad tasks download their code from the address svc listens on, which only Nomad clients on this machine reach; set SVC_PUBLIC_URL (or publicUrl) to an address every client reaches' });
  }
  const registry = createRegistry(config, (error) => report(error, { method: 'REGISTRY', path: '', requestId: undefined }));
  const scheduler = createDriver(config, {
    registry, logs: sink, zygotes: options.zygotes ?? false,
    // `svc serve` (a state of its own) belongs to no installation: its jobs are never another svc's to purge, nor it theirs.
    install: options.state === undefined ? installOf(config) : undefined,
    onContainerExit: (unit, id, reason) => autoscaler.containerExited(unit.key, id, reason),
    compile: createUnitCompiler({
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
      bundleUrl: (sha256) => artifacts!.url(config.publicUrl ?? base.url, sha256),
    }),
  });
  // What the platform starts and stops goes through this: a replica that lost the leadership lets go of the workloads.
  const driver = detachable(scheduler);
  // Replicas sharing Consul KV elect one leader (below), the only one that runs deployments; on its own svc always leads.
  const electing = config.state === 'consul' && options.state === undefined;
  let leader: LeaderElection | null = null;
  // The leader's own phase (null until this replica leads); a follower's role follows from its route copy.
  let leaderRole: ReplicaRole | null = electing ? null : 'starting';
  const images = createImageBuilder(config);
  if (images.name === 'oci') {
    logs({ unit: '', container: '', stream: 'system', time: new Date(), text: `docker images: ${config.imageBase} plus svc's layers, for ${config.imagePlatform}, pushed to ${config.imageRegistry} ${config.imageRegistryUsername === null ? 'anonymously' : `as ${config.imageRegistryUsername}`}` });
  }
  const routes = new RouteTable();
  const upstreams = new UpstreamPools(registry);
  const admission = new Admission(registry, { waitTimeoutMs: config.queueTimeoutSeconds * 1000 });
  // Replicas share the work: followers copy the leader's routes and report their load to its autoscaler.
  // Only with the Consul registry: a follower finds the instances there (the embedded one knows only this replica's).
  const sync = electing && config.registry === 'consul'
    ? new ReplicaSync({
      store: controlPlane.store, routes, admission, registry,
      evaluate: (units) => autoscaler.evaluate(units),
      report: (error) => report(error, { method: 'REPLICAS', path: '', requestId: undefined }),
    })
    : null;
  const role = (): ReplicaRole => leaderRole ?? (sync?.synced() ? 'following' : 'standby');
  const autoscaler = new Autoscaler({
    driver,
    admission,
    policy,
    fallback: queueDepth,
    logs: recentLogs,
    log: sink,
    emit: (event) => void plugins.parallel('onEvent', event),
    report: (error) => report(error, { method: 'AUTOSCALE', path: '', requestId: undefined }),
    leads: () => leader?.isLeader() ?? true,
    ...(sync === null ? {} : { peers: sync.peers }),
    ...options.autoscale,
  });
  if (sync !== null) {
    // In place of the autoscaler (it supervised admission from its constructor): on a follower, units it does not manage still wait.
    admission.supervise(replicaSupervisor({
      autoscaler,
      leads: () => leader?.isLeader() ?? false,
      notice: (unit, refused) => sync.notice(unit, refused),
      hasInstances: (unit) => registry.instances(unit).length > 0,
    }));
  }

  // The manager and the bundles are created once the server listens; requests come only after that.
  const api = controlPlaneRoutes({
    plugins, controlPlane, deployments: () => deployments, bundles: () => bundles, maxBundleBytes: options.maxBundleBytes ?? DEFAULT_MAX_BUNDLE_BYTES, autoscaler,
    logs: deploymentLogs, runs: () => runs, previews: () => previews, maxCallBytes: config.maxBodyBytes,
    ...(artifacts === null ? {} : { artifacts }),
  });
  const gateway = createGateway({ routes, upstreams, admission, plugins, report, platformRoutes: (ctx, next) => healthRoute(ctx, () => api(ctx, next)), maxBodyBytes: config.maxBodyBytes });
  // This replica's own address (not the load balancer's publicUrl): where followers forward the API while it leads.
  const self = { url: '' };
  const forward = createLeaderForward({ leaderAddress: () => leader?.leaderAddress() ?? null, self: () => self.url });
  const gate = createReplicaGate({ role, routes, forward, servesWhileStarting: () => sync?.tookOverWithCopy() ?? false });
  const server = http.createServer((req, res) => {
    if (!gate.request(req, res)) void gateway.handleRequest(req, res);
  });
  server.on('clientError', answerClientError);
  const websockets = createWebSocketBridge({ routes, admission, plugins, report });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!gate.upgrade(req, socket)) websockets.handleUpgrade(req, socket, head);
  });
  await listen(server, config.port, config.host);
  const url = config.publicUrl ?? baseUrl(server.address() as AddressInfo);
  base.url = url;
  self.url = config.advertiseUrl ?? defaultAdvertiseUrl(server.address() as AddressInfo);
  if (sync !== null && config.advertiseUrl === null) {
    logs({ unit: '', container: '', stream: 'system', time: new Date(), text: `this replica tells the others it is at ${self.url} (where followers forward the API while it leads); set SVC_ADVERTISE_URL (advertiseUrl) if they reach it elsewhere` });
  }

  // Code runs from its bundle, extracted once per sha256 into the cache dir; bundles are kept in the data dir.
  const bundles = createCodeBundles({ dataDir: config.dataDir, cacheDir: config.cacheDir, python: config.python });
  const deployments = new DeploymentManager({
    plugins, images, driver, routes, baseUrl: () => url, baseDomain: config.baseDomain, bundles, autoscaler,
    records: new DeploymentRecords(controlPlane.store),
    logs: deploymentLogs,
    report: (error) => report(error, { method: 'RESTORE', path: '', requestId: undefined }),
  });
  // Remote runs and API previews end when their clients leave them idle.
  const leases = new IdleLeases();
  const runs = new RunManager({
    plugins, images, driver, bundles, autoscaler, admission, upstreams, logs: deploymentLogs, leases,
    report: (error) => report(error, { method: 'RUN', path: '', requestId: undefined }),
  });
  const previews = new Previews({
    deployments, logs: deploymentLogs, leases,
    load: (unit) => ({
      ...admission.load(unit),
      lastActiveAt: Math.max(0, ...registry.instances(unit).map((instance) => admission.use(instance.id).lastActiveAt ?? 0)) || undefined,
    }),
    report: (error) => report(error, { method: 'PREVIEW', path: '', requestId: undefined }),
  });
  const stopServices = async () => {
    leases.close();
    previews.close();
    // WebSocket sessions first: they would hold their containers' drain until its timeout.
    websockets.close();
    // Started first: from its first (synchronous) step every workload URL answers shutting_down while requests in flight finish.
    const deploymentsDown = deployments.shutdown().catch((error: unknown) => report(error, { method: 'CLOSE', path: '', requestId: undefined }));
    await runs.shutdown().catch((error: unknown) => report(error, { method: 'CLOSE', path: '', requestId: undefined }));
    await deploymentsDown;
    autoscaler.close();
    await leader?.close();
    await sync?.close();
    forward.close();
    admission.close();
    await driver.close();
    await upstreams.close();
    await registry.close();
    // Log followers end their streams: they would hold the drain until its bound.
    await deploymentLogs.close();
    await drainServer(server, SERVER_DRAIN_MS);
  };
  // Deployed apps come back as they were: running ones start again, paused and stopped ones stay down.
  const takeOver = async (signal: AbortSignal | undefined) => {
    checkNotStopped(signal);
    // A follower that wins stops copying routes; the copies serve on while it restores its own.
    await sync?.stopFollowing();
    await deployments.restore();
    checkNotStopped(signal);
    // Stored logs of deployments that do not exist (svc stopped between an app's delete and its files) go now.
    deploymentLogs.forgetAllBut((key) => deployments.get({ workspace: key.workspace, app: key.app, stage: 'deployed' })?.workloads.some((w) => w.name === key.workload) ?? false);
    // Before the purge: followers switch to this replica's routes while the old jobs still serve.
    if (sync !== null && signal !== undefined) await sync.lead(signal);
    // This installation's jobs that no deployment of this svc runs: a previous leader's, or a crashed svc's.
    // `svc serve` (state: memory) owns no installation: it never purges.
    if ('purgeUnknownJobs' in scheduler && options.state === undefined) {
      await scheduler.purgeUnknownJobs((key) => keepOldJob(deployments, key)).catch((error: unknown) => report(error, { method: 'RESTORE', path: '', requestId: undefined }));
      checkNotStopped(signal);
    }
  };
  const { signal } = options;
  if (electing) {
    // Until it leads, a replica follows: it serves the leader's routes and forwards the rest to it; then it restores the deployments and serves.
    sync?.follow();
    leader = startLeadership({
      consul: { address: config.consulAddr, ...(config.consulToken === null ? {} : { token: config.consulToken }) },
      key: `${config.consulPrefix}leader`,
      advertise: self.url,
      takeOver,
      setRole: (next) => (leaderRole = next),
      // The new leader runs the workloads (and publishes the routes) now: stopping them here would take its adopted jobs down.
      letGo: () => {
        driver.detach();
        void sync?.letGo();
      },
      log: (text) => logs({ unit: '', container: '', stream: 'system', text, time: new Date() }),
      report: (error) => report(error, { method: 'LEADER', path: '', requestId: undefined }),
      ...(options.onLeadershipLost ? { onLeadershipLost: options.onLeadershipLost } : {}),
    });
  } else {
    // A stop meanwhile cuts the restore short: the shutdown refuses to start anything more.
    const cutRestore = () => void deployments.shutdown().catch(() => {}); // stopServices() reports its failure
    signal?.addEventListener('abort', cutRestore, { once: true });
    try {
      await takeOver(signal);
      leaderRole = 'ready';
    } catch (error) {
      // A start that fails (a record it cannot read) or is stopped leaves nothing listening or running; the caller closes the store.
      await stopServices();
      throw error;
    } finally {
      signal?.removeEventListener('abort', cutRestore);
    }
  }

  let closing: Promise<void> | undefined;
  return {
    config,
    url,
    ownerToken: { secret: owner.secret, path: owner.path, created: owner.created, warnings: [...owner.warnings, ...ownerTokenWarnings(controlPlane, owner.path)] },
    controlPlane,
    signInLink: controlPlane.firstSignIn && { url: `${url}/login#${controlPlane.firstSignIn.secret}`, expiresAt: controlPlane.firstSignIn.expiresAt },
    plugins,
    deployments,
    registry,
    driver: scheduler,
    get leader() {
      return leader;
    },
    get role() {
      return role();
    },
    autoscaler,
    deploymentLogs,
    close(closeOptions = {}) {
      // On Nomad a server's workloads outlive it: the next leader takes them over (a restart, a rolling update of svc).
      // `svc serve`'s own (state: memory) belong to nobody else: they stop with it.
      if (closeOptions.keepWorkloads ?? (scheduler.name === 'nomad' && options.state === undefined)) {
        driver.detach();
        // Followers keep serving the routes as they are: the drain's offline routes are not published.
        void sync?.letGo();
      }
      closing ??= (async () => {
        await stopServices();
        // Last: nothing is left that could write to the store.
        await controlPlane.close();
      })();
      return closing;
    },
  };
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
  const workload = deployments.get({ workspace: ref.workspace, app: ref.app, stage: ref.stage })?.workloads.find((w) => w.name === ref.workload);
  return workload?.status === 'failed';
}

/** Throws `shutting_down` once the start's signal is aborted. */
function checkNotStopped(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new SvcError('shutting_down', 'svc was stopped while it started.');
}

/** How long requests still in flight when svc stops (API calls) may take before their connections are cut. */
const SERVER_DRAIN_MS = 5_000;

/**
 * Stops accepting connections and lets requests in flight finish, for at most
 * `boundMs`. Node closes only connections idle at the moment of `close()`; a
 * keep-alive connection whose request ends later would hold the server open
 * until its keep-alive timeout, so idle ones are closed again until none is left.
 */
async function drainServer(server: http.Server, boundMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  const sweep = setInterval(() => server.closeIdleConnections(), 20);
  const cut = setTimeout(() => server.closeAllConnections(), boundMs);
  try {
    await closed;
  } finally {
    clearInterval(sweep);
    clearTimeout(cut);
  }
}

/** What the operator must know about the owner token's record: a revoked one no longer works. */
function ownerTokenWarnings(controlPlane: ControlPlane, file: string): string[] {
  if (controlPlane.ownerTokenStatus !== 'revoked') return [];
  return [`the owner token in ${file} was revoked and no longer works; delete the file and restart svc to get a new one.`];
}

/**
 * Requests Node cannot even parse never reach Koa: answer them in the same
 * JSON shape (431 for oversized headers, else 400) and close the connection.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  const failure =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new SvcError('headers_too_large', 'the request headers are larger than the gateway accepts (16 KiB in all).', { hint: 'Send fewer or shorter headers or cookies.' })
      : new SvcError('bad_request', 'the request is not valid HTTP.');
  writeRawError(socket, failure);
}

/** The platform's own liveness route; workspaces cannot be named `_svc`. */
const healthRoute: Middleware = async (ctx, next) => {
  if (ctx.path !== '/_svc/health') return next();
  ctx.body = { status: 'ok' };
};

function listen(server: http.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') {
        reject(new SvcError('config_invalid', `port ${port} on ${host} is already in use.`, { hint: 'Stop the other process or choose another port with --port (0 picks a free one).' }));
      } else reject(error);
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

function baseUrl(address: AddressInfo): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`;
}
