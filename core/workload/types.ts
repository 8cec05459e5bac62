/**
 * The resolved workload model the rest of the platform uses: camelCase,
 * readonly, every default filled in. Built from a validated Manifest v1 by
 * core/workload/resolve.ts; nothing else should read the wire format.
 */
import type { JsonSchema } from '../manifest/types.js';

export type { JsonSchema, JsonValue, JsonObject } from '../manifest/types.js';

export type WorkloadKind = 'function' | 'endpoint' | 'asgi' | 'realtime';

export interface ImageSpec {
  readonly id: string;
  readonly pythonVersion: string;
  readonly pythonPackages: readonly string[];
}

export interface AutoscalerSpec {
  readonly minContainers: number;
  readonly maxContainers: number;
  readonly tasksPerContainer: number;
}

export interface HttpSpec {
  readonly route: string;
  /** Empty = every method (asgi, realtime). */
  readonly methods: readonly string[];
  readonly authorized: boolean;
  readonly domain: string | null;
}

export interface ScalingSpec {
  readonly workers: number;
  readonly concurrency: number;
  readonly maxPendingTasks: number;
  readonly keepWarmSeconds: number;
  readonly checkpointEnabled: boolean;
  readonly autoscaler: AutoscalerSpec;
}

export interface ResourceSpec {
  readonly cpu: number;
  readonly memoryMiB: number;
}

export interface Workload {
  readonly app: string;
  readonly name: string;
  readonly kind: WorkloadKind;
  /** `__qualname__` of the decorated function; null for asgi. */
  readonly handler: string | null;
  /** `__qualname__` of the `on_start` function each worker runs before it serves; null without one. */
  readonly onStart: string | null;
  readonly doc: string | null;
  readonly image: ImageSpec;
  readonly resources: ResourceSpec;
  /** null for kind 'function'. */
  readonly http: HttpSpec | null;
  /** Functions get the platform defaults (see defaults.ts). */
  readonly scaling: ScalingSpec;
  readonly parameters: JsonSchema | null;
  readonly returns: JsonSchema | null;
  /**
   * Names of the workspace's secrets whose keys its workers get as environment variables, in
   * order (a later one's key wins). Names only, never values; absent (older records): none.
   */
  readonly secrets?: readonly string[];
}

export interface AppSpec {
  readonly name: string;
  readonly entry: string;
  readonly sdkVersion: string;
  readonly images: readonly ImageSpec[];
  readonly workloads: readonly Workload[];
}

/** One broken rule: `path` like `workloads[1].options.memory`, `images[0].id`, `app.name`. */
export interface ValidationIssue {
  readonly path: string;
  readonly message: string;
}
