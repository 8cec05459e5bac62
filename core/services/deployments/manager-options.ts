/**
 * What the deployment manager (manager.ts) is asked, a deploy request, and
 * what it is given: the services it drives and is told about.
 */
import type { CodeBundles } from '../../infra/bundles/types.js';
import type { RouteTable } from '../../traffic/gateway/types.js';
import type { ImageBuilder } from '../../infra/images/types.js';
import type { DeploymentLogs } from '../../infra/logs/deployment-logs.js';
import type { PluginHost } from '../../infra/plugin/host.js';
import type { Principal } from '../../infra/plugin/types.js';
import type { DeploymentUnit, SchedulerDriver, SourceRef } from '../../infra/scheduler/types.js';
import type { SecretEnvironment } from '../secrets/types.js';
import type { VolumeMounting } from '../volumes/types.js';
import type { SvcError } from '../../model/errors.js';
import type { AppSpec, ScalingSpec, Workload } from '../../model/workload/types.js';
import type { ApiReader } from './capture-apis.js';
import type { DeploymentRef, Stage } from '../../model/deployment-keys.js';
import type { DeploymentRecords } from './records.js';
import type { GpuDevice } from '../../model/gpus/nvidia-smi-csv.js';

export interface DeployRequest {
  readonly spec: AppSpec;
  /** The project folder (bundled first when the manager has bundles). Exactly one of `source` and `bundleSha256`. */
  readonly source?: SourceRef;
  /** A bundle already in the store (uploaded through the API). */
  readonly bundleSha256?: string;
  readonly workspace: string;
  readonly stage: Stage;
  readonly principal: Principal | null;
  /** Deploy only this workload of the spec (`svc deploy app.py:greet`); the others keep their version. */
  readonly workload?: string;
  /** Remove the app's deployed workloads that the spec no longer has (whole-app deploys only). */
  readonly prune?: boolean;
  /** The app's `svc.Secret.from_dict` values, which its workloads name `@<i>`; sent beside the manifest, kept sealed. */
  readonly inlineSecrets?: readonly Readonly<Record<string, string>>[];
}

/** What the manager needs of the autoscaler (core/services/autoscale/controller.ts). */
export interface UnitScaler {
  /** Takes over a unit whose first containers are healthy: scales it from now on. */
  manage(unit: DeploymentUnit): void;
  /** Stops scaling the unit, lets its requests in flight finish, then removes its containers. */
  stopUnit(key: string): Promise<void>;
  /** Scales the unit within new bounds from now on (`svc deployment scale`), after `prepare`; the unit as now scaled, or null when not managed. */
  retune(key: string, scaling: ScalingSpec, prepare?: (unit: DeploymentUnit) => Promise<void>): Promise<DeploymentUnit | null>;
  /** `quota_exceeded` when starting these containers, less the `releasing` units', passes the workspace's quota; else null. */
  quotaRefusal(
    workspace: string,
    starting: readonly { readonly workload: Workload; readonly count: number }[],
    releasing: readonly string[],
  ): SvcError | null;
  /** Why the unit's queue does not move besides busy containers (one of them waits for a GPU), in words; null: nothing more to say. */
  waitReason?(key: string): string | null;
}

/** The unit key that already serves a workload of a deployment, if any (see `restore`). */
export type AdoptUnit = (ref: DeploymentRef, workload: string) => string | undefined;

export interface DeploymentManagerOptions {
  readonly plugins: PluginHost;
  readonly images: ImageBuilder;
  readonly driver: SchedulerDriver;
  readonly routes: RouteTable;
  /** Base URL of the gateway, for the URLs printed to users. */
  readonly baseUrl: () => string;
  /** Base domain of host-based URLs (`<app>-<workload>.<domain>`); null or absent: path URLs only. */
  readonly baseDomain?: string | null;
  /**
   * Bundles the project and runs containers from its extracted copy, so that later edits do
   * not change a running deployment. Without it, containers run from the project folder.
   */
  readonly bundles?: CodeBundles;
  /**
   * Scales each unit after its deploy and drains it on removal. Without it,
   * units keep the containers the deploy started and removal stops them at once.
   */
  readonly autoscaler?: UnitScaler;
  /** Where stage `deployed` is kept across restarts; without it nothing is durable. */
  readonly records?: DeploymentRecords;
  /** Failures nobody waits for (a deployment that cannot be restored). */
  readonly report?: (error: unknown) => void;
  /**
   * The GPUs a deploy's `gpu` options are checked against (`gpu_unavailable`): the machine's, for
   * the embedded default. Null or absent: not checked here, as on Nomad, whose clients come and go
   * and whose placement says itself when no node has the GPUs (core/infra/scheduler/nomad/plan.ts).
   */
  readonly gpus?: readonly GpuDevice[] | null;
  /**
   * The per-deployment log store (core/infra/logs/deployment-logs.ts): told each
   * unit's version, given the image build lines of a deploy, and told when a
   * deployment is deleted (its history goes, its followers end).
   */
  readonly logs?: Pick<DeploymentLogs, 'setVersion' | 'addBuildLine' | 'forget'>;
  /** See StartContext#routable: a new unit's route switches once the gateway sees an instance of it. */
  readonly routable?: (unitKey: string) => Promise<void>;
  /** The workspaces' secrets: a deploy naming one that does not exist is refused first; units get their values. */
  readonly secrets?: SecretEnvironment;
  /** The workspaces' volumes: a deploy mounting one that does not exist is refused first; units mount their folders. */
  readonly volumes?: VolumeMounting;
  /**
   * Reads an ASGI app's OpenAPI description from its new unit during a deploy
   * (capture-apis.ts); without it no description is read.
   */
  readonly captureApi?: ApiReader;
}
