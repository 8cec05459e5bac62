/**
 * The resolved workload model the rest of the platform uses: camelCase,
 * readonly, every default filled in. Built from a validated Manifest v1 by
 * core/model/workload/resolve.ts; nothing else should read the wire format.
 */
import type { ClassParameterType, ClassParameterValue, ClassParameterValues } from './class-parameters.js';
import type { JsonSchema } from './manifest/types.js';
import type { VolumeMount } from '../volume-mounts.js';
import type { CorsSpec } from '../cors.js';
import type { GpuRequest } from '../gpus/gpu-request.js';

export type { JsonSchema, JsonValue, JsonObject } from './manifest/types.js';

export type WorkloadKind = 'function' | 'endpoint' | 'asgi' | 'realtime';

export interface ImageSpec {
  readonly id: string;
  readonly pythonVersion: string;
  readonly pythonPackages: readonly string[];
  /**
   * Requirements files to install after `pythonPackages` (pip/uv `-r`), in order: a base
   * `name` (two may share one) and the file's text. Empty for most images. Part of the id,
   * so a builder's cache key must cover their content.
   */
  readonly requirementsFiles: readonly RequirementsFile[];
  /** Environment variables of every container of the image, below secrets and svc's own (empty when none). */
  readonly env: Readonly<Record<string, string>>;
}

export interface RequirementsFile {
  readonly name: string;
  readonly content: string;
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
  /** Browsers of other origins (endpoints, realtime handlers): the gateway answers their preflights; absent or null: none. */
  readonly cors?: CorsSpec | null;
}

export interface ScalingSpec {
  readonly workers: number;
  readonly concurrency: number;
  readonly maxPendingTasks: number;
  readonly keepWarmSeconds: number;
  readonly checkpointEnabled: boolean;
  readonly autoscaler: AutoscalerSpec;
  /** Idle containers kept ready beyond those the load needs, within max_containers; absent (older records): 0. */
  readonly bufferContainers?: number;
}

/** `svc.Retries` of a function: the server runs a failed call again (core/services/runs/retries.ts). */
export interface RetriesSpec {
  readonly maxRetries: number;
  readonly backoffCoefficient: number;
  /** Seconds. */
  readonly initialDelay: number;
  /** Seconds. */
  readonly maxDelay: number;
}

export interface ResourceSpec {
  readonly cpu: number;
  readonly memoryMiB: number;
  /** GPUs each container gets (`gpu=`); absent: none (and in specs stored before the option). */
  readonly gpu?: GpuRequest;
}

/**
 * When a deployed function runs by itself (`schedule=` in the SDK): a 5-field cron
 * expression read in an IANA time zone, or a period in whole seconds. `overlap`
 * lets a tick start a run while the previous one still runs (otherwise the tick is skipped).
 */
export type ScheduleSpec =
  | { readonly cron: string; readonly timezone: string; readonly overlap: boolean }
  | { readonly every: number; readonly overlap: boolean };

/** An `@app.cls` class (the manifest's `class` block, docs/manifest.md). */
export interface ClassSpec {
  readonly methods: readonly {
    readonly name: string;
    readonly doc: string | null;
    readonly parameters: JsonSchema;
    readonly returns: JsonSchema;
  }[];
  /** In the order each worker runs them, `snap` ones first. */
  readonly enter: readonly { readonly name: string; readonly snap: boolean }[];
  readonly exit: string | null;
  /** Its `svc.parameter()` attributes, in the order the class declares them; a default is absent when the parameter is required. */
  readonly parameters: readonly { readonly name: string; readonly type: ClassParameterType; readonly default?: ClassParameterValue }[];
  /** A run's values of them (every one, defaults filled in): what its containers' instances get. Absent in a deployed spec. */
  readonly bound?: ClassParameterValues;
  /** On an endpoint: the `@svc.endpoint()` method of the class it serves. */
  readonly serves?: string;
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
  /** The workspace's volumes its containers mount, each at its path; absent (none, or older records): none. */
  readonly volumes?: readonly VolumeMount[];
  /** A function that is an `@app.cls` class: its methods (each call names one), set-up and tear-down; absent otherwise. */
  readonly class?: ClassSpec;
  /**
   * Seconds one call may run (functions and endpoints; the manifest's default when it has
   * none). Absent for asgi and realtime, and in specs stored before time-outs existed.
   */
  readonly timeout?: number;
  /** A function's retries; null without. Absent for other kinds and in older stored specs. */
  readonly retries?: RetriesSpec | null;
  /**
   * asgi only: the app's path of its OpenAPI description, read at each deploy
   * (`/openapi.json`); null: not read (`openapi=None`). Absent for other kinds,
   * and in records written before the option existed.
   */
  readonly openapi?: string | null;
  /** Functions only: when the deployed function runs by itself; absent or null without a schedule. */
  readonly schedule?: ScheduleSpec | null;
  /**
   * Functions, endpoints and asgi apps: where the outcome of each of its kept calls (spawned, or
   * sent with `Prefer: respond-async`) is POSTed when the call names no URL itself; its form is
   * checked, where it points is checked when a call is made. Absent without one.
   */
  readonly callbackUrl?: string;
}

export interface AppSpec {
  readonly name: string;
  readonly entry: string;
  readonly sdkVersion: string;
  readonly images: readonly ImageSpec[];
  readonly workloads: readonly Workload[];
}

// One broken rule: declared with the schema checks that find most of them.
export type { ValidationIssue } from '../schema/issues.js';
