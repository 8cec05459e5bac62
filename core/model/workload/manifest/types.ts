/**
 * Wire types of Manifest v1, exactly as docs/manifest.md describes them:
 * the JSON that `python -m svc.manifest` prints. Keys stay snake_case because
 * this is the contract with the Python SDK; the platform works on the resolved
 * model in core/model/workload/types.ts instead.
 */

/** Readonly: schemas are shared by the frozen resolved model. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | JsonObject;
export interface JsonObject {
  readonly [key: string]: JsonValue;
}
/** A JSON Schema document; `{}` accepts anything. */
export type JsonSchema = JsonObject;

export type ManifestKind = 'function' | 'endpoint' | 'asgi' | 'realtime';

export interface ManifestV1 {
  manifest_version: 1;
  sdk_version: string;
  /** Module to import relative to the project root (`app`, `pkg.app`). */
  entry: string;
  app: { name: string };
  /** Every distinct image the workloads use, sorted by id. */
  images: ManifestImage[];
  /** In declaration order. */
  workloads: ManifestWorkload[];
}

export interface ManifestImage {
  /** `img-` + first 16 hex digits of the SHA-256 of the canonical image JSON. */
  id: string;
  /** major.minor, e.g. "3.11". */
  python_version: string;
  /** pip requirement strings, in the order added, no duplicates. */
  python_packages: string[];
  /** The requirements files it installs (`Image.pip_install_from_requirements`), in the order added; absent when none. */
  requirements_files?: ManifestRequirementsFile[];
  /** Environment variables of its containers (`Image.env`); absent when none. */
  env?: Record<string, string>;
}

export interface ManifestRequirementsFile {
  /** The file's base name (`requirements.txt`). */
  name: string;
  /** Its text, as pip reads it. */
  content: string;
}

export interface AutoscalerOptions {
  max_containers: number;
  tasks_per_container: number;
  min_containers: number;
}

/** `gpu="H100:2"`, `gpu=["H100", "A100"]`, `gpu="any"` as the manifest writes them (core/model/gpus/gpu-request.ts). */
export interface ManifestGpu {
  models: string[];
  count: number;
}

/** Options every kind has. */
export interface ResourceOptions {
  cpu: number;
  /** `<integer>Mi` or `<integer>Gi`. */
  memory: string;
  /** GPUs per container (`gpu=`); null or absent (manifests of SDKs before it): none. */
  gpu?: ManifestGpu | null;
  /** `__qualname__` of the function run once per worker before it takes requests; null without one. */
  on_start: string | null;
}

/** Options every HTTP-served kind has. */
export interface ServedOptions extends ResourceOptions {
  workers: number;
  autoscaler: AutoscalerOptions;
  /** Absent in manifests written before it: 0. */
  buffer_containers?: number;
  max_pending_tasks: number;
  checkpoint_enabled: boolean;
  authorized: boolean;
  domain: string | null;
}

/** A function's schedule: a 5-field cron expression in an IANA time zone, or a period in whole seconds. */
export type ManifestSchedule = { cron: string; timezone: string; overlap: boolean } | { every: number; overlap: boolean };

/** `svc.Retries` in the manifest (docs/manifest.md). */
export interface RetriesOptions {
  max_retries: number;
  backoff_coefficient: number;
  initial_delay: number;
  max_delay: number;
}

/**
 * Where the outcome of each kept call (spawned, or sent with `Prefer: respond-async`) is POSTed
 * when the call gives none itself; null or missing (manifests written before it): nowhere.
 */
interface CallbackOptions {
  callback_url?: string | null;
}

/**
 * `timeout`, `retries`, `schedule`, `autoscaler` and `callback_url` may be missing: manifests
 * written before them keep their meaning (no schedule, one container, no callback).
 */
export interface FunctionOptions extends ResourceOptions, CallbackOptions {
  autoscaler?: AutoscalerOptions;
  /** Absent in manifests written before it: 0. */
  buffer_containers?: number;
  /** New containers fork from a warmed process (imports, on_start, a class's snap=True enter methods done); absent: false. */
  checkpoint_enabled?: boolean;
  /** Seconds an idle container stays up before the autoscaler may stop it; absent: the default (60). */
  keep_warm_seconds?: number;
  timeout?: number;
  retries?: RetriesOptions | null;
  schedule?: ManifestSchedule | null;
}

/** `cors=svc.Cors(...)` as the manifest writes it (core/model/cors.ts). */
export interface ManifestCors {
  origins: string[];
  methods: string[] | null;
  headers: string[];
  credentials: boolean;
  max_age: number;
}

export interface EndpointOptions extends ServedOptions, CallbackOptions {
  route: string;
  methods: string[];
  concurrency: number;
  keep_warm: number;
  timeout?: number;
  /** Absent in manifests written before it: null. */
  cors?: ManifestCors | null;
}

interface AppOptions extends ServedOptions {
  concurrent_requests: number;
  keep_warm_seconds: number;
}

export interface RealtimeOptions extends AppOptions {
  /** Absent in manifests written before it: null. */
  cors?: ManifestCors | null;
}

export interface AsgiOptions extends AppOptions, CallbackOptions {
  /** The app's path of its OpenAPI description, read at each deploy; null: not read. */
  openapi: string | null;
}

interface WorkloadBase {
  /** A lowercase DNS label (`nameProblem` of core/model/names.ts); unique in the app. */
  name: string;
  /** Id of an entry of `images`. */
  image: string;
  doc: string | null;
  /** Names of the workspace's secrets whose keys the workers get as environment variables; absent: none. */
  secrets?: string[];
  /** The workspace's volumes its containers mount (`volumes={"/data": vol}`); absent: none. */
  volumes?: ManifestVolumeMount[];
}

/** One entry of a workload's `volumes`: a volume of the workspace, at an absolute path in each container. */
export interface ManifestVolumeMount {
  path: string;
  volume: string;
  read_only: boolean;
}

export interface FunctionWorkload extends WorkloadBase {
  kind: 'function';
  handler: string;
  options: FunctionOptions;
  parameters: JsonSchema;
  returns: JsonSchema;
  /** Present when the function is an `@app.cls` class (`handler` is the class): each call names one of its methods. */
  class?: ManifestClass;
}

/** An `@app.cls` class: the methods callers call, and what each worker runs first and last (docs/manifest.md). */
export interface ManifestClass {
  /** `@svc.method()` methods, in the order the class defines them, each with its own signature (none when it only serves HTTP). */
  methods: ManifestMethod[];
  /** `@svc.enter()` methods, in the order they run (`snap: true` ones first). */
  enter: { name: string; snap: boolean }[];
  /** The `@svc.exit()` method; null without one. */
  exit: string | null;
  /** Its `svc.parameter()` attributes, in declaration order: `default` is left out for a required one (bytes as `{"base64": ...}`). */
  parameters: { name: string; type: 'str' | 'int' | 'bool' | 'bytes'; default?: string | number | boolean | { base64: string } }[];
}

export interface ManifestMethod {
  name: string;
  doc: string | null;
  /** Its arguments' object schema, without `self`. */
  parameters: JsonSchema;
  returns: JsonSchema;
}

export interface EndpointWorkload extends WorkloadBase {
  kind: 'endpoint';
  handler: string;
  options: EndpointOptions;
  parameters: JsonSchema;
  returns: JsonSchema;
  /** Present when it serves a method of an `@app.cls` class (`serves`): its workers make the class's instance as the class's do. */
  class?: ManifestClass & { serves: string };
}

export interface AsgiWorkload extends WorkloadBase {
  kind: 'asgi';
  /** The wrapped object is found by workload name. */
  handler: null;
  options: AsgiOptions;
  parameters: null;
  returns: null;
}

export interface RealtimeWorkload extends WorkloadBase {
  kind: 'realtime';
  handler: string;
  options: RealtimeOptions;
  parameters: JsonSchema;
  returns: JsonSchema;
}

export type ManifestWorkload = FunctionWorkload | EndpointWorkload | AsgiWorkload | RealtimeWorkload;
