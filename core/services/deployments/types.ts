import type { ApiOutcome } from '../app-api/types.js';
import type { BundleInfo } from '../../infra/bundles/types.js';
import type { JsonSchema } from '../../model/workload/manifest/types.js';
import type { SourceRef } from '../../infra/scheduler/types.js';
import type { AppSpec, WorkloadKind } from '../../model/workload/types.js';
import type { DeploymentRef } from '../../model/deployment-keys.js';

/** What a deploy tells the user about each workload. */
export interface DeployedWorkload {
  readonly name: string;
  readonly kind: WorkloadKind;
  /** Stable URL (with the route); null for functions and kinds not served yet. */
  readonly url: string | null;
  /** The same workload at its host-based URL (`http://<app>-<workload>.<base domain>`), when it has one. */
  readonly hostUrl: string | null;
  readonly methods: readonly string[];
  readonly authorized: boolean;
  readonly parameters: JsonSchema | null;
  /** Why a workload has no URL, when that is not obvious. */
  readonly note: string | null;
  /**
   * `running` (served kinds: containers up), `paused` (its app is paused), `stopped`
   * (its deployment is stopped), `failed` (could not be started again after a restart),
   * `not_served` (functions and kinds that get no containers).
   */
  readonly status: 'running' | 'paused' | 'stopped' | 'failed' | 'not_served';
  /** The version it runs: 1 for its first deploy, one more for each deploy of it since. */
  readonly version: number;
  /** The unit key of the containers serving it now (it changes with each version); null while down. */
  readonly unit: string | null;
  /** The bundle its version runs (scheduled runs of a function start from it); null or absent without bundles. */
  readonly bundleSha256?: string | null;
  /**
   * ASGI apps: the OpenAPI description read from the app when this version
   * was deployed (core/services/deployments/capture-apis.ts), or why there is none;
   * null for other kinds.
   */
  readonly api: ApiOutcome | null;
  /** Its containers' bounds now: the code's, or set by hand (`svc deployment scale`) until its next deploy; absent in a remote preview's summary. */
  readonly scaling?: { readonly min: number; readonly max: number; readonly buffer: number; readonly byHand: boolean };
}

export interface Deployment {
  readonly ref: DeploymentRef;
  readonly spec: AppSpec;
  /** Where the containers run the code from: the extracted bundle, or the project itself without bundles. */
  readonly source: SourceRef;
  /** The code bundle the containers run; null when the manager runs the project folder itself. */
  readonly bundle: BundleInfo | null;
  /** Unit keys of the containers serving now, one per running served workload. */
  readonly units: readonly string[];
  /** Paused: every workload is down, definitions kept (stage `deployed` only). */
  readonly paused: boolean;
  readonly workloads: readonly DeployedWorkload[];
  /**
   * What the user should know and would not see otherwise: options this
   * platform accepts but does not enforce (`greet: domain="…" is not enforced
   * yet`; `cpu and memory are not limited on this machine (why): …` where no
   * cgroup can be made), and workloads without a host-based URL, with why.
   */
  readonly warnings: readonly string[];
  readonly createdAt: Date;
}

/** Progress of a deploy, for spinners and logs. */
export type DeployProgress =
  | { readonly type: 'bundle'; readonly status: 'packing'; readonly root: string }
  | { readonly type: 'bundle'; readonly status: 'ready'; readonly bundle: BundleInfo }
  | { readonly type: 'image'; readonly imageId: string; readonly status: 'building' | 'built' | 'cached' }
  | { readonly type: 'image'; readonly imageId: string; readonly status: 'log'; readonly line: string }
  | { readonly type: 'workload'; readonly workload: string; readonly status: 'starting' | 'ready' };
