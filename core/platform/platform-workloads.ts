/**
 * The services that run users' code: code bundles, the deployment manager,
 * remote runs and their maps, API previews (ended when their clients leave them idle),
 * and the scheduled functions (run by the leader, or on Nomad by Nomad).
 */
import { randomBytes } from 'node:crypto';
import { Volumes } from '../services/volumes/volumes.js';
import { buildVolumeStorage } from './volume-storage.js';
import { UsageMeter } from '../services/usage/usage-meter.js';
import { acceptedCall, CALLBACK_HEADER } from '../http/api/calls.js';
import { MAX_VALUE_BYTES } from '../model/store/types.js';
import { createDeferredSender, type Deferral } from '../traffic/gateway/deferred.js';
import { captureApi } from '../services/app-api/capture.js';
import { createCodeBundles } from '../infra/bundles/service.js';
import { installOf, nomadClientOf } from './backends.js';
import { DeploymentManager } from '../services/deployments/manager.js';
import { DeploymentRecords } from '../services/deployments/records.js';
import type { DeploymentLogs } from '../infra/logs/deployment-logs.js';
import type { Backends } from './platform-backends.js';
import type { Scaling } from './platform-scaling.js';
import type { Wiring } from './platform-wiring.js';
import type { PluginHost } from '../infra/plugin/host.js';
import { untilInstances } from '../infra/registry/until-instances.js';
import { IdleLeases } from '../services/runs/idle-leases.js';
import { Previews } from '../services/runs/previews.js';
import { RunManager } from '../services/runs/runs.js';
import { MapManager } from '../services/maps/maps.js';
import { ScheduleHistory } from '../services/schedules/history.js';
import { NomadPeriodicSchedules } from '../services/schedules/nomad-periodic.js';
import { ScheduleRunner, type ScheduleLeader } from '../services/schedules/scheduler.js';
import type { NomadClient } from '../infra/scheduler/nomad/client.js';
import { createUnitCompiler } from '../infra/scheduler/nomad/unit-compiler.js';
import { compilePeriodicJob } from '../../jobs/periodic.js';
import { CallRecords } from '../services/calls/call-records.js';
import { CallService } from '../services/calls/calls.js';
import { CallGroups } from '../services/calls/call-groups.js';
import { GroupRecords } from '../services/calls/group-records.js';
import { CallExecutor } from '../services/calls/executor.js';
import { RunPool } from '../services/calls/run-pool.js';
import { CallbackDelivery } from '../services/calls/callback-delivery.js';
import { CallbackGuard } from '../services/calls/callback-url.js';

/** How long a deploy waits for the gateway to see a new unit's instance before it switches anyway (Consul checks every 5 s). */
const ROUTABLE_WAIT_MS = 30_000;

export interface WorkloadNeeds {
  readonly plugins: PluginHost;
  readonly backends: Backends;
  readonly scaling: Scaling;
  readonly deploymentLogs: DeploymentLogs;
}

export interface WorkloadServices {
  readonly bundles: ReturnType<typeof createCodeBundles>;
  readonly deployments: DeploymentManager;
  readonly leases: IdleLeases;
  readonly runs: RunManager;
  /** Maps of the runs: a function called once per input (`.map()`). */
  readonly maps: MapManager;
  /** The Nomad API when `scheduler: nomad`; else null. */
  readonly nomad: NomadClient | null;
  /** What the leader does for scheduled functions: run them (ScheduleRunner), or on Nomad keep their periodic jobs registered. */
  readonly schedules: ScheduleLeader;
  readonly previews: Previews;
  /** Spawned calls: the API's side and the leader's executor. */
  readonly calls: CallService;
  readonly callGroups: CallGroups;
  readonly callExecutor: CallExecutor;
  /** Requests to workload URLs sent with `Prefer: respond-async`, kept as calls (the gateway's side). */
  readonly deferral: Deferral;
  /** The workspaces' volumes: their files, and what deploys and runs mount. */
  readonly volumes: Volumes;
  /** What each workload's containers use, kept by the hour (`svc usage`). */
  readonly usage: UsageMeter;
}

/** The workspaces' volumes, in the data dir or CSI volumes on Nomad, bounded by the operator's limits; `/metrics` reads their sizes. */
function buildVolumes({ config, options, controlPlane, metrics }: Wiring, needs: WorkloadNeeds): Volumes {
  const volumes = new Volumes({
    store: controlPlane.store,
    storage: buildVolumeStorage({
      config,
      images: needs.backends.images,
      unitCompilerOptions: needs.backends.unitCompilerOptions,
      install: options.state === undefined ? installOf(config) : undefined,
      metrics,
    }),
    limits: { volumeMaxBytes: config.volumeMaxBytes, workspaceMaxBytes: config.workspaceVolumeBytes },
  });
  metrics.work.readVolumes(() => volumes.usage());
  return volumes;
}

export function buildWorkloadServices(wiring: Wiring, needs: WorkloadNeeds): WorkloadServices {
  const { config, controlPlane, metrics, reportAs } = wiring;
  const { plugins, deploymentLogs } = needs;
  const { registry, driver, images } = needs.backends;
  const { upstreams, admission, autoscaler } = needs.scaling;
  // Code runs from its bundle, extracted once per sha256 into the cache dir; bundles are kept in the data dir.
  const bundles = createCodeBundles({ dataDir: config.dataDir, cacheDir: config.cacheDir, python: config.python });
  const volumes = buildVolumes(wiring, needs);
  const deployments = buildDeployments(wiring, needs, bundles, volumes);
  // Remote runs and API previews end when their clients leave them idle.
  const leases = new IdleLeases();
  const runs = new RunManager({
    plugins,
    images,
    driver,
    bundles,
    autoscaler,
    admission,
    upstreams,
    logs: deploymentLogs,
    leases,
    report: reportAs('RUN'),
    secrets: controlPlane.secrets,
    volumes,
    limits: { perWorkspace: config.maxRunsPerWorkspace, parameterSetsPerClass: config.classParameterSets },
  });
  const maps = new MapManager({ runs, meter: metrics.work });
  metrics.work.readBacklog(() => maps.backlog());
  const { nomad, schedules } = buildSchedules(wiring, needs, deployments, runs);
  const previews = new Previews({
    deployments,
    logs: deploymentLogs,
    leases,
    load: (unit) => ({
      ...admission.load(unit),
      lastActiveAt: Math.max(0, ...registry.instances(unit).map((instance) => admission.use(instance.id).lastActiveAt ?? 0)) || undefined,
    }),
    report: reportAs('PREVIEW'),
  });
  const { calls, callGroups, callExecutor, deferral } = buildCalls(wiring, deployments, runs);
  const usage = new UsageMeter({
    store: controlPlane.store,
    driver,
    units: () => [
      ...deployments.list().flatMap((d) =>
        d.workloads.flatMap((w) => {
          if (w.unit === null) return [];
          const memoryMiB = d.spec.workloads.find((spec) => spec.name === w.name)?.resources.memoryMiB ?? 0;
          return [{ ref: d.ref, workload: w.name, unit: w.unit, memoryMiB }];
        }),
      ),
      // Remote runs' containers too: a function's `.remote()`, `.map()` and spawned calls run there.
      ...runs.meteredUnits(),
    ],
    traffic: (unit) => metrics.trafficOf(unit),
    retentionDays: config.usageRetentionDays,
    report: reportAs('USAGE'),
    counted: (ref, workload, used) =>
      metrics.work.containerUsage({ workspace: ref.workspace, app: ref.app, workload }, used.cpuSeconds, used.memoryGiBSeconds),
  });
  usage.start();
  return {
    bundles,
    deployments,
    leases,
    runs,
    maps,
    nomad,
    schedules,
    previews,
    calls,
    callGroups,
    callExecutor,
    deferral,
    volumes,
    usage,
  };
}

/** Spawned calls: recorded in the state store, run by the leader through pooled remote runs. */
function buildCalls(
  wiring: Wiring,
  deployments: DeploymentManager,
  runs: RunManager,
): Pick<WorkloadServices, 'calls' | 'callGroups' | 'callExecutor' | 'deferral'> {
  const { config, options, controlPlane, metrics, state, reportAs } = wiring;
  // Marks the deferred requests this process's leader sends to its own gateway (deferred.ts).
  const deferredSecret = randomBytes(32).toString('hex');
  const records = new CallRecords(controlPlane.store, reportAs('CALL'));
  // svc's own addresses are refused as callback targets: its listener's, and its public URL's.
  const ownHosts = [config.host, ...(config.publicUrl === null ? [] : [new URL(config.publicUrl).hostname])];
  const guard = new CallbackGuard({ allowPrivate: config.callbackAllowPrivate, ownHosts });
  const secretOf = async (workspace: string) => (await controlPlane.callbackSecrets.get(workspace)).secret;
  const delivery = new CallbackDelivery({ records, guard, secretOf, report: reportAs('CALLBACK'), backoff: options.callbackBackoff });
  let calls: CallService | undefined;
  let callGroups: CallGroups | undefined;
  const callExecutor = new CallExecutor({
    records,
    runs,
    pool: new RunPool(runs, deployments),
    report: reportAs('CALL'),
    ended: (call) => calls?.ended(call),
    callbacks: delivery,
    sweep: async () => {
      await calls!.sweep();
      await callGroups!.sweep();
    },
    sendRequest: createDeferredSender({ url: () => state.url, secret: deferredSecret, maxBodyBytes: DEFERRED_ANSWER_BYTES }),
  });
  calls = new CallService({
    records,
    executor: callExecutor,
    resultTtlSeconds: config.callResultTtlSeconds,
    callbacks: { guard, secretOf, due: (workspace, id) => delivery.due(workspace, id) },
    meter: metrics.work,
    waitReason: (workspace, id) => runs.waitReason(workspace, id),
  });
  callGroups = new CallGroups({ groups: new GroupRecords(controlPlane.store), calls, resultTtlSeconds: config.callResultTtlSeconds });
  const deferral: Deferral = {
    secret: deferredSecret,
    async keep({ entry, principal, request, callbackHeader }) {
      const { workspace, app, stage } = entry.ref;
      const callbackUrl = callbackHeader === undefined ? null : await calls!.checkCallback(workspace, callbackHeader, CALLBACK_HEADER);
      const call = await calls!.defer({ workspace, principal, app, stage, workload: entry.workload, request, callbackUrl });
      const answer = acceptedCall(call);
      return { location: answer.headers.Location, body: answer.body };
    },
  };
  return { calls, callGroups, callExecutor, deferral };
}

/** The most of a deferred request's answer body kept: its outcome holds it in base64, within one state store value. */
const DEFERRED_ANSWER_BYTES = Math.floor(((MAX_VALUE_BYTES - 16 * 1024) * 3) / 4);

/** The deployment manager: it deploys units, and waits for the gateway to see them before it routes to them. */
function buildDeployments(wiring: Wiring, needs: WorkloadNeeds, bundles: WorkloadServices['bundles'], volumes: Volumes): DeploymentManager {
  const { config, controlPlane, state, system, reportAs } = wiring;
  const { plugins, deploymentLogs } = needs;
  const { registry, driver, images } = needs.backends;
  const { routes, upstreams, autoscaler } = needs.scaling;
  return new DeploymentManager({
    plugins,
    images,
    driver,
    routes,
    baseUrl: () => state.url,
    baseDomain: config.baseDomain,
    bundles,
    autoscaler,
    records: new DeploymentRecords(controlPlane.store),
    logs: deploymentLogs,
    routable: async (unit) => {
      if (!(await untilInstances(registry, unit, ROUTABLE_WAIT_MS))) {
        system(
          `the gateway sees no instance of ${unit} ${ROUTABLE_WAIT_MS / 1000} s after its containers became healthy (is its Consul check passing?): its requests wait until one appears`,
        );
      }
    },
    report: reportAs('RESTORE'),
    gpus: needs.backends.gpus?.devices ?? null,
    secrets: controlPlane.secrets,
    volumes,
    captureApi: async (unit, request) => {
      const instance = registry.instances(unit.key)[0];
      if (instance === undefined)
        return { capture: null, message: `no OpenAPI description: the gateway sees no container of it to read ${request.source} from` };
      return captureApi((options) => upstreams.request(instance, options), request);
    },
  });
}

/** Who runs the scheduled functions: svc's leader, or on Nomad, Nomad's periodic jobs, which svc keeps registered. */
function buildSchedules(
  wiring: Wiring,
  needs: WorkloadNeeds,
  deployments: DeploymentManager,
  runs: RunManager,
): Pick<WorkloadServices, 'nomad' | 'schedules'> {
  const { config, options, controlPlane, metrics, system, reportAs } = wiring;
  const { images } = needs.backends;
  // The leader runs the scheduled functions; on Nomad, Nomad runs their periodic jobs and svc keeps those registered.
  const nomad = config.scheduler === 'nomad' ? nomadClientOf(config, metrics) : null;
  const schedules: ScheduleLeader =
    nomad === null
      ? new ScheduleRunner({
          deployments,
          runs,
          history: new ScheduleHistory(controlPlane.store),
          log: system,
          report: reportAs('SCHEDULE'),
        })
      : new NomadPeriodicSchedules({
          deployments,
          images,
          client: nomad,
          compile: createUnitCompiler(needs.backends.unitCompilerOptions, compilePeriodicJob),
          install: options.state === undefined ? installOf(config) : undefined,
          secrets: controlPlane.secrets,
          log: system,
          report: reportAs('SCHEDULE'),
        });
  return { nomad, schedules };
}
