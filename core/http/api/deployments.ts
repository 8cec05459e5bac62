/**
 * `GET /api/v1/deployments`: every deployed (and previewed) workload of the
 * caller's workspace, named `<app>/<workload>`, with its URLs and what the
 * autoscaler says of it now. Read-only; the lifecycle routes are under
 * `/apps/:app` (apps.ts, app-deployments.ts).
 */
import type { UnitScalingStatus } from '../../services/autoscale/types.js';
import type { Stage } from '../../model/deployment-keys.js';
import type { Deployment } from '../../services/deployments/types.js';
import type { WorkloadKind } from '../../model/workload/types.js';
import { answer, listOf, ref } from './openapi/shared.js';
import type { ApiRoute, ApiServices } from './types.js';

export interface DeploymentListing {
  /** `<app>/<workload>`, as the CLI names deployments. */
  readonly name: string;
  readonly app: string;
  readonly workload: string;
  readonly stage: Stage;
  readonly kind: WorkloadKind;
  readonly urls: { readonly path: string | null; readonly host: string | null };
  /** The autoscaler's state; `not_served` for kinds that get no containers (functions, until remote runs arrive). */
  readonly state: UnitScalingStatus['state'] | 'not_served';
  readonly containers: { readonly ready: number; readonly starting: number; readonly desired: number };
  readonly inFlight: number;
  readonly queued: number;
  readonly createdAt: string;
  /** Its bounds now, and whether they were set by hand (`svc deployment scale`) since its deploy; null for functions. */
  readonly scaling: { readonly min: number; readonly max: number; readonly buffer: number; readonly byHand: boolean } | null;
}

export const deploymentRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/deployments',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'listDeployments',
      summary: "Every workload deployed or previewed in the caller's workspace, with URLs and containers.",
      responses: {
        200: answer('The deployments.', listOf('deployments', ref('Deployment'))),
      },
    },
    async handle({ principal }, services) {
      const mine = services.deployments.list().filter((deployment) => deployment.ref.workspace === principal.workspace);
      const listed = mine.flatMap((deployment) => listWorkloads(deployment, services));
      listed.sort((a, b) => a.name.localeCompare(b.name) || a.stage.localeCompare(b.stage));
      return { status: 200, body: { deployments: listed } };
    },
  },
];

function listWorkloads(deployment: Deployment, services: ApiServices): DeploymentListing[] {
  const { ref } = deployment;
  return deployment.workloads.map((workload) => {
    const status = workload.unit === null ? null : services.autoscaler.status(workload.unit);
    const count = (state: string) => status?.containers.filter((c) => c.state === state).length ?? 0;
    return {
      name: `${ref.app}/${workload.name}`,
      app: ref.app,
      workload: workload.name,
      stage: ref.stage,
      kind: workload.kind,
      urls: { path: workload.url, host: workload.hostUrl },
      state: status?.state ?? 'not_served',
      containers: { ready: count('healthy'), starting: count('starting'), desired: status?.desired ?? 0 },
      inFlight: status?.inFlight ?? 0,
      queued: status?.queued ?? 0,
      createdAt: deployment.createdAt.toISOString(),
      scaling: workload.kind === 'function' ? null : (workload.scaling ?? null),
    };
  });
}
