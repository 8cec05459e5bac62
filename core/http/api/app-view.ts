/**
 * How the API describes a deployed app: each deployment (workload) with its
 * URLs, status, current version and the versions kept, and its containers
 * as the autoscaler sees them now; the app's warnings. Deploys, pause,
 * resume, stop and `GET /apps/:app` all answer with this one shape.
 */
import type { AppRecord, DeploymentRecord } from '../../services/deployments/records.js';
import { DeploymentRecords } from '../../services/deployments/records.js';
import type { DeployedWorkload, Deployment } from '../../services/deployments/types.js';
import type { WorkloadKind } from '../../model/workload/types.js';
import type { ApiServices } from './types.js';

export interface VersionView {
  readonly version: number;
  readonly bundleSha256: string | null;
  readonly createdAt: string;
  readonly createdBy: string | null;
}

export interface DeploymentView {
  /** `<app>/<workload>`, as the CLI names deployments. */
  readonly name: string;
  readonly workload: string;
  readonly kind: WorkloadKind;
  readonly status: DeployedWorkload['status'];
  readonly urls: { readonly path: string | null; readonly host: string | null };
  readonly version: number;
  /** The versions kept, newest last. */
  readonly versions: readonly VersionView[];
  readonly containers: { readonly ready: number; readonly starting: number; readonly desired: number };
  /** ASGI apps: what the deploy of this version read of the app's OpenAPI description (`OpenAPI description captured from /openapi.json, 3 operations`, or why not); null for other kinds. */
  readonly api: string | null;
}

export interface AppView {
  readonly name: string;
  readonly paused: boolean;
  readonly deployments: readonly DeploymentView[];
  readonly warnings: readonly string[];
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface AppSummary {
  readonly name: string;
  readonly paused: boolean;
  readonly workloads: number;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export function deploymentRecords(services: ApiServices): DeploymentRecords {
  return new DeploymentRecords(services.controlPlane.store);
}

export async function describeApp(deployment: Deployment, services: ApiServices): Promise<AppView> {
  const { workspace, app } = deployment.ref;
  const records = deploymentRecords(services);
  // Only deployed apps have records; a preview of an app that is also deployed must not show the deployed one's.
  const [appRecord, stored] =
    deployment.ref.stage === 'deployed'
      ? await Promise.all([records.app(workspace, app), records.deployments(workspace, app)])
      : [null, []];
  const byWorkload = new Map(stored.map((record) => [record.workload, record]));
  const deployments = deployment.workloads.map((workload) => describeWorkload(app, workload, byWorkload.get(workload.name), services));
  deployments.sort((a, b) => a.name.localeCompare(b.name));
  return { name: app, paused: deployment.paused, deployments, warnings: deployment.warnings, ...times(deployment, appRecord) };
}

export function summarizeApp(deployment: Deployment, record: AppRecord | undefined): AppSummary {
  return { name: deployment.ref.app, paused: deployment.paused, workloads: deployment.workloads.length, ...times(deployment, record) };
}

function describeWorkload(
  app: string,
  workload: DeployedWorkload,
  record: DeploymentRecord | undefined,
  services: ApiServices,
): DeploymentView {
  const status = workload.unit === null ? null : services.autoscaler.status(workload.unit);
  const count = (state: string) => status?.containers.filter((c) => c.state === state).length ?? 0;
  return {
    name: `${app}/${workload.name}`,
    workload: workload.name,
    kind: workload.kind,
    status: workload.status,
    urls: { path: workload.url, host: workload.hostUrl },
    version: workload.version,
    versions: (record?.versions ?? []).map(({ version, bundleSha256, createdAt, createdBy }) => ({
      version,
      bundleSha256,
      createdAt,
      createdBy,
    })),
    containers: { ready: count('healthy'), starting: count('starting'), desired: status?.desired ?? 0 },
    api: workload.api?.message ?? null,
  };
}

function times(deployment: Deployment, record: AppRecord | null | undefined): { createdAt: string; updatedAt: string } {
  const createdAt = record?.createdAt ?? deployment.createdAt.toISOString();
  return { createdAt, updatedAt: record?.updatedAt ?? createdAt };
}
