/**
 * The deployments this process runs, as the manager keeps them in memory
 * (rebuilt from the records after a restart), and how they are described
 * to users: URLs, status and version of each workload.
 */
import type { ApiOutcome } from '../app-api/types.js';
import type { BundleInfo } from '../../infra/bundles/types.js';
import type { SvcError } from '../../model/errors.js';
import { hostUrl, workloadUrl } from '../../model/urls.js';
import type { RouteTable } from '../../traffic/gateway/types.js';
import type { SourceRef } from '../../infra/scheduler/types.js';
import type { ImageSpec, Workload, WorkloadKind } from '../../model/workload/types.js';
import type { DeploymentRef } from '../../model/deployment-keys.js';
import type { DeploymentStatus } from './records.js';
import type { DeployedWorkload, Deployment } from './types.js';

/**
 * Kinds that get a URL and running containers. Functions are called on
 * demand (`.remote()`, `svc run`), which arrives with the client: they are
 * recorded but not started.
 */
const SERVED_KINDS: ReadonlySet<WorkloadKind> = new Set(['endpoint', 'asgi', 'realtime']);

export const isServed = (workload: Workload): boolean => SERVED_KINDS.has(workload.kind);

export interface LiveWorkload {
  /** Replaced when its scaling bounds are set by hand (`svc deployment scale`). */
  workload: Workload;
  /** Its scaling bounds were set by hand since its deploy (scale-by-hand.ts). */
  scaledByHand?: boolean;
  readonly version: number;
  /** Where its containers run the code from. */
  readonly source: SourceRef;
  readonly bundleSha256: string | null;
  status: DeploymentStatus;
  /** The unit whose containers serve it now; null while it is down or not served. */
  unit: string | null;
  /** The unit key its route entry holds (the serving unit, or its stable key while offline); null: no route. */
  routeUnit: string | null;
  /** Why it is down although it should run (it could not be restored). */
  failure: SvcError | null;
  /** ASGI apps: the OpenAPI description read at its deploy, and what the deploy said of it; null for other kinds. */
  api: ApiOutcome | null;
}

export interface LiveDeployment {
  readonly ref: DeploymentRef;
  entry: string;
  sdkVersion: string;
  readonly workloads: Map<string, LiveWorkload>;
  paused: boolean;
  /** The bundle of the latest deploy. */
  bundle: BundleInfo | null;
  warnings: readonly string[];
  readonly createdAt: Date;
}

export interface DescribeContext {
  readonly baseUrl: string;
  readonly routes: RouteTable;
}

export function describeDeployment(live: LiveDeployment, context: DescribeContext): Deployment {
  const all = [...live.workloads.values()];
  const images = new Map<string, ImageSpec>(all.map((lw) => [lw.workload.image.id, lw.workload.image]));
  const latest = all.reduce<LiveWorkload | undefined>(
    (newest, lw) => (newest === undefined || lw.version > newest.version ? lw : newest),
    undefined,
  );
  return {
    ref: live.ref,
    spec: {
      name: live.ref.app,
      entry: live.entry,
      sdkVersion: live.sdkVersion,
      images: [...images.values()],
      workloads: all.map((lw) => lw.workload),
    },
    source: latest?.source ?? { root: '', entry: live.entry },
    bundle: live.bundle,
    units: all.flatMap((lw) => (lw.unit === null ? [] : [lw.unit])),
    paused: live.paused,
    workloads: all.map((lw) => describeWorkload(live, lw, context)),
    warnings: live.warnings,
    createdAt: live.createdAt,
  };
}

function describeWorkload(live: LiveDeployment, lw: LiveWorkload, context: DescribeContext): DeployedWorkload {
  const { workload } = lw;
  const served = isServed(workload);
  const http = workload.http;
  const host = served && lw.routeUnit !== null ? context.routes.hostOf(lw.routeUnit) : null;
  return {
    name: workload.name,
    kind: workload.kind,
    url: served && http ? publicUrl(workloadUrl(context.baseUrl, live.ref, workload.name, http.route), workload.kind) : null,
    hostUrl: host && http ? publicUrl(hostUrl(context.baseUrl, host, http.route), workload.kind) : null,
    methods: http?.methods ?? [],
    authorized: http?.authorized ?? true,
    parameters: workload.parameters,
    note: served || workload.kind === 'function' ? null : `${workload.kind} workloads are not served by this version yet`,
    status: !served ? 'not_served' : live.paused ? 'paused' : lw.status === 'stopped' ? 'stopped' : lw.unit !== null ? 'running' : 'failed',
    version: lw.version,
    unit: lw.unit,
    bundleSha256: lw.bundleSha256,
    api: lw.api,
    scaling: {
      min: workload.scaling.autoscaler.minContainers,
      max: workload.scaling.autoscaler.maxContainers,
      buffer: workload.scaling.bufferContainers ?? 0,
      byHand: lw.scaledByHand === true,
    },
  };
}

/** A realtime workload is reached over WebSocket: its URL says so. */
export function publicUrl(httpUrl: string, kind: WorkloadKind): string {
  return kind === 'realtime' ? httpUrl.replace(/^http/, 'ws') : httpUrl;
}
