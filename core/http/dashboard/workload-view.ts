/**
 * What the Apps page shows of one workload, from the deployment, its stored
 * versions and what the autoscaler says now: a status a person reads
 * (running, starting, scaled to zero, paused, stopped, crash loop, failed),
 * the version and when it was deployed, the URL, containers against their
 * maximum, requests in flight and queued, the GPUs its containers hold and why one waits.
 */
import { gpuRequestText } from '../../model/gpus/gpu-request.js';
import type { DeploymentView } from '../api/app-view.js';
import type { ApiServices } from '../api/types.js';
import type { Deployment, DeployedWorkload } from '../../services/deployments/types.js';
import type { ClassSpec } from '../../model/workload/types.js';
import type { UnitScalingStatus } from '../../services/autoscale/types.js';

export interface WorkloadView {
  readonly name: string;
  readonly kind: string;
  readonly status: string;
  /** A CSS class for the status: ok, busy, down, bad. */
  readonly tone: 'ok' | 'busy' | 'down' | 'bad';
  readonly version: number;
  readonly deployedAt: string | null;
  readonly url: string | null;
  readonly running: number;
  readonly starting: number;
  readonly maxContainers: number;
  /** Its bounds were set by hand (`svc deployment scale`) and hold until its next deploy. */
  readonly scaledByHand: boolean;
  readonly inFlight: number;
  readonly queued: number;
  /** Its `gpu` option (`H100 | A100 ×2`); null without GPUs. */
  readonly gpu: string | null;
  /** The GPUs its containers hold now and why one waits (`c-1a…: L4×1; a container is waiting for a GPU (gpu any): …`); null without `gpu` or containers. */
  readonly gpuNow: string | null;
}

export function workloadView(
  deployment: Deployment,
  workload: DeployedWorkload,
  described: DeploymentView | undefined,
  services: Pick<ApiServices, 'autoscaler'>,
): WorkloadView {
  const scaling = workload.unit === null ? null : services.autoscaler.status(workload.unit);
  const spec = deployment.spec.workloads.find((w) => w.name === workload.name);
  const current = described?.versions.find((v) => v.version === workload.version);
  const { status, tone } = statusOf(deployment.paused, workload, scaling?.state ?? null);
  return {
    name: workload.name,
    kind: kindText(workload.kind, spec?.class),
    status,
    tone,
    version: workload.version,
    deployedAt: current?.createdAt ?? null,
    url: workload.url,
    running: scaling?.containers.filter((c) => c.state === 'healthy').length ?? 0,
    starting: scaling?.containers.filter((c) => c.state === 'starting').length ?? 0,
    maxContainers: workload.scaling?.max ?? spec?.scaling.autoscaler.maxContainers ?? 0,
    scaledByHand: workload.scaling?.byHand === true,
    inFlight: scaling?.inFlight ?? 0,
    queued: scaling?.queued ?? 0,
    gpu: spec?.resources.gpu === undefined ? null : gpuRequestText(spec.resources.gpu),
    gpuNow: workload.unit === null || scaling === null ? null : gpusNow(workload.unit, scaling, services),
  };
}

/** Who holds which GPUs, and why one of the unit's containers waits (the autoscaler's reason, as its requests' 503 says it). */
function gpusNow(unit: string, scaling: UnitScalingStatus, services: Pick<ApiServices, 'autoscaler'>): string | null {
  const held = scaling.containers.flatMap((c) => (c.gpu?.state === 'held' ? [`${c.id}: ${c.gpu.model}×${c.gpu.count}`] : []));
  const waiting = services.autoscaler.waitReason(unit);
  if (held.length === 0 && waiting === null) return null;
  return [held.length === 0 ? 'none held' : held.join(', '), ...(waiting === null ? [] : [`a container is ${waiting}`])].join('; ');
}

/** A class is a function whose calls name its methods, and its endpoints serve one each: the page says which. */
function kindText(kind: string, spec: ClassSpec | undefined): string {
  if (spec === undefined) return kind;
  if (spec.serves !== undefined) return `endpoint (method ${spec.serves})`;
  return `class (${spec.methods.map((m) => m.name).join(', ') || 'served over HTTP'})`;
}

function statusOf(paused: boolean, workload: DeployedWorkload, state: string | null): { status: string; tone: WorkloadView['tone'] } {
  if (paused || workload.status === 'paused') return { status: 'paused', tone: 'down' };
  if (workload.status === 'stopped') return { status: 'stopped', tone: 'down' };
  if (workload.status === 'failed') return { status: 'failed', tone: 'bad' };
  if (workload.status === 'not_served') return { status: 'called with .remote()', tone: 'ok' };
  if (state === 'crash_loop') return { status: 'crash loop', tone: 'bad' };
  if (state === 'starting') return { status: 'starting', tone: 'busy' };
  if (state === 'idle') return { status: 'scaled to zero', tone: 'ok' };
  return { status: 'running', tone: 'ok' };
}
