/**
 * Between the live deployments (live.ts) and their records (records.ts):
 * the versions a deploy records, and the live deployment a restart rebuilds
 * from what was recorded.
 */
import { withOverride } from './scale-by-hand.js';
import type { ApiCapture, ApiOutcome } from '../app-api/types.js';
import type { BundleInfo } from '../../infra/bundles/types.js';
import type { Principal } from '../../infra/plugin/types.js';
import type { SourceRef } from '../../infra/scheduler/types.js';
import type { AppSpec, Workload } from '../../model/workload/types.js';
import type { DeploymentRef } from '../../model/deployment-keys.js';
import type { LiveDeployment } from './live.js';
import { currentVersion, type AppRecord, type DeploymentRecord, type DeploymentRecords } from './records.js';

/** What a deploy records of each workload it deploys. */
export interface DeployedVersions {
  readonly spec: AppSpec;
  readonly targets: readonly Workload[];
  readonly source: SourceRef;
  readonly bundle: BundleInfo | null;
  readonly principal: Principal | null;
}

/** The version each target gets: recorded (stage `deployed` with records), else counted in memory. */
export async function recordVersions(
  records: DeploymentRecords | undefined,
  ref: DeploymentRef,
  previous: LiveDeployment | undefined,
  deployed: DeployedVersions,
): Promise<Map<string, number>> {
  const { spec, targets, source, bundle, principal } = deployed;
  if (ref.stage === 'deployed' && records) {
    const added = targets.map((workload) => ({
      bundleSha256: bundle?.sha256 ?? null,
      sourceRoot: source.root,
      entry: spec.entry,
      sdkVersion: spec.sdkVersion,
      workload,
      createdBy: principal?.subject ?? null,
    }));
    return records.addVersions(ref.workspace, ref.app, added);
  }
  // Previews keep their version count in memory only.
  return new Map(targets.map((workload) => [workload.name, (previous?.workloads.get(workload.name)?.version ?? 0) + 1]));
}

/** A recorded app as it was, every workload down (no unit, no route) until the restore starts it. */
export function restoredLive(app: AppRecord, stored: readonly DeploymentRecord[], apis: ReadonlyMap<string, ApiCapture>): LiveDeployment {
  const ref: DeploymentRef = { workspace: app.workspace, app: app.name, stage: 'deployed' };
  const versions = stored.map((record) => ({ record, version: currentVersion(record) }));
  const first = versions[0]?.version;
  const live: LiveDeployment = {
    ref,
    entry: first?.entry ?? '',
    sdkVersion: first?.sdkVersion ?? '',
    workloads: new Map(),
    paused: app.paused,
    bundle: null,
    warnings: [],
    createdAt: new Date(app.createdAt),
  };
  for (const { record, version } of versions) {
    const override = record.scaleOverride;
    live.workloads.set(record.workload, {
      // Bounds set by hand hold until the next deploy, across restarts too.
      workload: override ? { ...version.workload, scaling: withOverride(version.workload.scaling, override) } : version.workload,
      ...(override ? { scaledByHand: true } : {}),
      version: version.version,
      bundleSha256: version.bundleSha256,
      source: { root: version.sourceRoot, entry: version.entry },
      status: record.status,
      unit: null,
      routeUnit: null,
      failure: null,
      api: version.workload.kind === 'asgi' ? restoredApi(apis.get(record.workload), version.version) : null,
    });
  }
  return live;
}

/** The description kept for an ASGI workload, when it was read from the version it runs. */
function restoredApi(capture: ApiCapture | undefined, version: number): ApiOutcome {
  if (capture === undefined || capture.version !== version)
    return { capture: null, message: `no OpenAPI description was read at the deploy of version ${version}` };
  return { capture, message: `OpenAPI description captured from ${capture.source} at the deploy of version ${version}` };
}
