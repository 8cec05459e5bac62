/**
 * The public plugin API of svc: the one `Plugin` type that built-in features
 * (`plugins/`) and third-party packages implement. Each hook is documented
 * here, where it is declared; `docs/plugins.md` repeats it as a table.
 */
import type { NomadJob } from '../../../jobs/types.js';
import type { AppSpec, AutoscalerSpec, JsonSchema, WorkloadKind } from '../../model/workload/types.js';
import type { Principal } from '../../model/principal.js';

/**
 * The plugin API major version this svc provides. A plugin declares the
 * version it targets in `apiVersion`; the host refuses any other value
 * (`plugin_incompatible`). Bumped only for breaking changes to this file.
 */
export const PLUGIN_API_VERSION = 1;

/** Who made a request: auth's shape, part of the plugin API. */
export type { Principal } from '../../model/principal.js';

/** What an `authenticate` hook sees of an incoming HTTP or WebSocket request. */
export interface AuthRequest {
  /** Request headers, names lower-cased (Node's `IncomingHttpHeaders`). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly url: URL;
  /** Workspace of the target workload. */
  readonly workspace: string;
  /** `websocket` for an upgrade the gateway will bridge (browsers cannot set headers there). */
  readonly transport: 'http' | 'websocket';
}

/** Context of an `authorizeDeploy` call. */
export interface DeployContext {
  /** Workspace the app is deployed into. */
  readonly workspace: string;
  /** `run`: a remote run of one function (`.remote()`, `svc run`); the spec then holds the whole app. */
  readonly stage: 'preview' | 'deployed' | 'run';
  /** Who deploys; `null` when the control plane runs without authentication. */
  readonly principal: Principal | null;
  /**
   * True for a dry run (`svc deploy --dry-run`, the plan route): check and
   * refuse as for a deploy, but change nothing (claim no name, write no record).
   * Absent means false.
   */
  readonly dryRun?: boolean;
}

/** What a `resolveRoute` hook sees of a request, before svc routes it. */
export interface RouteRequest {
  /** The Host header's name: lower case, without the port and a trailing dot. */
  readonly host: string;
  /** The request path, without the query string. */
  readonly path: string;
}

/**
 * A `resolveRoute` answer: the deployed workload that serves the whole host
 * (the path goes to it unchanged, at the root), or `served: false` for a host
 * the plugin owns but does not serve now (pending verification, suspended):
 * the gateway then answers 404 and never tries svc's own URLs for it.
 */
export type ResolvedRoute =
  | { readonly served: true; readonly workspace: string; readonly app: string; readonly workload: string }
  | { readonly served: false; readonly reason: string };

/** Context of a `transformJob` call: the deployment unit the Nomad job runs. */
export interface JobTransformContext {
  readonly workspace: string;
  readonly app: string;
  readonly stage: 'preview' | 'deployed' | 'run';
  /** The workload's name (the job's one task group). */
  readonly workload: string;
}

/** What happened on the platform; delivered to `onEvent`. */
export type PlatformEvent =
  | {
      readonly type: 'deployment.ready';
      readonly workspace: string;
      readonly app: string;
      readonly stage: 'preview' | 'deployed' | 'run';
      readonly workloads: readonly { readonly name: string; readonly kind: WorkloadKind; readonly url: string | null }[];
    }
  | {
      readonly type: 'deployment.stopped';
      readonly workspace: string;
      readonly app: string;
      readonly stage: 'preview' | 'deployed' | 'run';
    }
  | {
      /** An operator changed a workspace's plan (core/services/workspaces/plans.ts). */
      readonly type: 'workspace.plan_changed';
      readonly workspace: string;
      readonly plan: string;
      readonly previous: string;
      /** The operator's account id. */
      readonly by: string;
      /** ISO 8601. */
      readonly at: string;
    }
  | {
      readonly type: 'container.started' | 'container.stopped' | 'container.failed';
      readonly workspace: string;
      readonly app: string;
      readonly workload: string;
      readonly containerId: string;
      /** Why it stopped or failed (exit code, health check…), when known. */
      readonly reason?: string;
    };

/** What a scaling policy sees of one deployment unit (one workload of one deployment) at one moment. */
export interface ScalingInput {
  readonly workload: {
    readonly app: string;
    readonly name: string;
    readonly kind: WorkloadKind;
    /** `min_containers`, `max_containers`, `tasks_per_container`. */
    readonly autoscaler: AutoscalerSpec;
    /** Processes per container. */
    readonly workers: number;
    /** Requests one worker takes at once (`concurrency` / `concurrent_requests`). */
    readonly concurrency: number;
    /** Idle seconds before a container may stop (`keep_warm` / `keep_warm_seconds`). */
    readonly keepWarmSeconds: number;
  };
  /** Requests holding a slot on one of the unit's containers now. */
  readonly inFlight: number;
  /** Requests waiting in the unit's queue for a slot. */
  readonly queued: number;
  /** Containers running or starting now. */
  readonly current: number;
}

/**
 * An autoscaling policy: a **pure** function from the unit's load to the
 * number of containers it should have. It is called on every evaluation (at
 * once when a request queues, else about once a second), so keep it cheap
 * and free of I/O. The controller owns everything else: it clamps the result
 * to [`min_containers`, `max_containers`] again (a policy cannot exceed
 * `max_containers`), starts containers at once, and stops only containers
 * idle for `keep_warm` seconds. A throw or a result that is not a
 * non-negative integer is reported once per unit, and the built-in
 * `queue-depth` policy decides instead.
 */
export type ScalingPolicy = (input: ScalingInput) => number;

/**
 * What a client exporter knows of a deployed app: the answer of
 * `GET /api/v1/apps/:app/interface`, as it was when the client was generated.
 */
export interface AppInterface {
  readonly app: string;
  /** The version of each workload the interface describes (1 for its first deploy, one more per deploy since). */
  readonly generatedFrom: { readonly versions: Readonly<Record<string, number>> };
  /** Every deployed workload, by name; functions too (kind `function`, no URL: they are called with `.remote()`). */
  readonly workloads: readonly InterfaceWorkload[];
}

/** One deployed workload as a client sees it. */
export interface InterfaceWorkload {
  readonly name: string;
  readonly kind: WorkloadKind;
  /** The function's docstring (`inspect.cleandoc`), null without one. */
  readonly doc: string | null;
  /** Stable path-based URL, route included (`ws://…` for realtime); null for functions. */
  readonly url: string | null;
  /** The same URL relative to the server's base URL (`/default/quickstart/greet/greet`); null for functions. */
  readonly path: string | null;
  /** Host-based URL, when the server has a base domain; else null. */
  readonly hostUrl: string | null;
  /** HTTP methods the endpoint takes; empty for every other kind (asgi and realtime take any). */
  readonly methods: readonly string[];
  /** The endpoint's route (`/greet`; `/` for asgi and realtime); null for functions. */
  readonly route: string | null;
  /** False when the URL is public (`authorized=False`). */
  readonly authorized: boolean;
  /** JSON Schema of the arguments (an `object` schema, one property per parameter); null for asgi. */
  readonly parameters: JsonSchema | null;
  /** JSON Schema of the return value (`{}` without an annotation); null for asgi. */
  readonly returns: JsonSchema | null;
  readonly status: 'running' | 'paused' | 'stopped' | 'failed' | 'not_served';
  /** A function that is an `@app.cls` class: the `@svc.method()` methods its callers call from Python. Absent otherwise. */
  readonly methodsOfClass?: readonly string[];
  /** The GPUs each of its containers gets (`gpu=`): the models tried in order and how many; absent without. */
  readonly gpu?: { readonly models: readonly string[]; readonly count: number };
  /**
   * ASGI apps only: the HTTP API the app described in OpenAPI when it was
   * deployed, ready for a generator (one method per operation). Null for
   * every other kind, and for an app that published no OpenAPI description.
   */
  readonly api: InterfaceApi | null;
}

/**
 * An ASGI app's OpenAPI description, captured from the running app at deploy
 * time (FastAPI's `/openapi.json` by default), and its operations made ready
 * for a generator. Every `$ref` in `operations` and `definitions` is
 * rewritten to `#/$defs/<name>`, resolved against `definitions`.
 */
export interface InterfaceApi {
  /** The OpenAPI document as the app served it. */
  readonly openapi: Readonly<Record<string, unknown>>;
  /** The app's path it was read from (`/openapi.json`). */
  readonly source: string;
  /** When it was read (ISO 8601). */
  readonly capturedAt: string;
  /** Every operation of `paths`, in the document's order. */
  readonly operations: readonly InterfaceOperation[];
  /** The document's `components.schemas`, by name. */
  readonly definitions: Readonly<Record<string, JsonSchema>>;
}

/** One operation (a method on a path) of an ASGI app's OpenAPI description. */
export interface InterfaceOperation {
  /**
   * A snake_case identifier, unique within the app: from the operationId
   * (FastAPI's default ids lose their path-and-method tail, so
   * `read_item_items__item_id__get` is `read_item`), else from method and
   * path (`get_items_item_id`).
   */
  readonly name: string;
  readonly operationId: string | null;
  /** Upper case: `GET`, `POST`, … */
  readonly method: string;
  /** The path as the description gives it, `{name}` placeholders included, relative to the app's root. */
  readonly path: string;
  readonly summary: string | null;
  readonly description: string | null;
  readonly deprecated: boolean;
  /** Path parameters first (in the path's order), then query and header ones. Cookie parameters are left out. */
  readonly parameters: readonly InterfaceOperationParameter[];
  /** The request body, when the operation takes one. */
  readonly body: InterfaceOperationBody | null;
  /** The first 2xx response. */
  readonly result: InterfaceOperationResult;
}

export interface InterfaceOperationParameter {
  /** The name on the wire. */
  readonly name: string;
  readonly in: 'path' | 'query' | 'header';
  readonly required: boolean;
  /** `{}` when the description gives none. */
  readonly schema: JsonSchema;
  readonly description: string | null;
}

export interface InterfaceOperationBody {
  /** `application/json` when the operation takes JSON, else the first content type it lists. */
  readonly contentType: string;
  readonly required: boolean;
  /** `{}` when the description gives none. */
  readonly schema: JsonSchema;
}

export interface InterfaceOperationResult {
  /** The status of the first 2xx response (200 when the description lists none). */
  readonly status: number;
  /** Its content type (`application/json` preferred); null when it has no body (204). */
  readonly contentType: string | null;
  /** The JSON Schema of a JSON body (`{}` when not given); null when the body is not JSON or there is none. */
  readonly schema: JsonSchema | null;
}

/** One file of a generated client: `path` relative to the output folder, with `/` separators. */
export interface ExportedFile {
  readonly path: string;
  readonly contents: string;
}

/** A generated client: its files, and the one folder that holds this app's client alone. */
export interface ExportedFiles {
  /**
   * The folder (relative, `/` separators) that holds this app's client and
   * nothing else, e.g. `svc_clients/quickstart`. The CLI replaces it as a
   * whole on each export. Files outside it are shared between apps (the
   * `svc_clients/__init__.py` of Python's layout): written when missing.
   */
  readonly root: string;
  readonly files: readonly ExportedFile[];
  /** How code imports the client, e.g. `svc_clients.quickstart`. */
  readonly importName: string;
  /** Lines telling the user how to use it, printed after the files are written. */
  readonly usage: readonly string[];
}

export interface ExportOptions {
  /** The package (module) name to generate under; default: made from the app's name. */
  readonly packageName?: string;
  /** The output folder as the user gave it, for the usage lines only (the exporter writes nothing). */
  readonly outDir?: string;
}

/**
 * Generates a typed client of a deployed app in one language. A **pure**
 * function of the interface: no file or network I/O, so it is safe to run
 * anywhere and easy to test; the CLI fetches the interface and writes the
 * files. Everything in the interface comes from a manifest, so escape every
 * name, docstring and literal into the target language.
 */
export interface ClientExporter {
  /** The language it writes, for people: `Python 3.10+`. */
  readonly language: string;
  /** One line on what it generates. */
  readonly description: string;
  export(app: AppInterface, options: ExportOptions): ExportedFiles;
}

/**
 * Every hook, name → signature (as if synchronous; each may also return a
 * Promise of the same result). All hooks are optional.
 */
export interface FunctionPluginHooks {
  /**
   * Kind: **first**. Runs in the gateway for every request to a workload that
   * requires authorization, before routing to a container.
   *
   * Return the `Principal` the credentials identify, or `null`/`undefined`
   * when this plugin does not recognise them: the next plugin is asked. The
   * first non-null result wins and later plugins are not called. When every
   * plugin returns null the gateway answers 401 `unauthorized`. Throw an
   * `SvcError` to refuse the request outright (for example `forbidden`).
   * Return the principal even when its workspace differs from
   * `request.workspace`; the gateway compares them and refuses the request.
   */
  authenticate(request: AuthRequest): Principal | null | undefined;

  /**
   * Kind: **first**. Runs in the gateway for every HTTP request and
   * WebSocket upgrade whose Host is not one of svc's own host-based URLs,
   * before svc's path routing; keep it cheap (an in-memory lookup).
   *
   * Return a `ResolvedRoute` for a host this plugin owns: `served: true`
   * names the deployed workload (stage `deployed`) that gets every path of
   * the host at its root (an ASGI app sees an empty `root_path`), with the
   * workload's own auth rules; `served: false` makes the gateway answer 404
   * (the host is claimed but not served). Return null/undefined for a host
   * this plugin does not know: the next plugin is asked, and when none
   * answers svc routes the request by its path as usual. A named workload
   * that is not deployed gets 404 too.
   */
  resolveRoute(request: RouteRequest): ResolvedRoute | null | undefined;

  /**
   * Kind: **sequential**. Runs in the control plane for every deploy, after
   * the manifest is resolved and validated and before desired state is
   * written. Each plugin receives the app as returned by the previous one.
   *
   * Return the app to deploy: the same object to accept it as is, or a new
   * one to change it (for example to cap `max_containers`). Do not mutate
   * the argument. Returning nothing is an error. Throw an `SvcError`
   * (usually `forbidden`) to refuse the deploy; its code and status reach
   * the client. `context.dryRun` is true when nothing may change (a plan):
   * check, but claim nothing. A refusal must leave nothing changed, so undo
   * what this hook already claimed before throwing.
   */
  authorizeDeploy(app: AppSpec, context: DeployContext): AppSpec;

  /**
   * Kind: **sequential**. Runs for every Nomad job svc compiles (one per
   * workload; `svc jobs render` and the Nomad driver), after the compiler and
   * before the job is validated and submitted. Each plugin receives the job
   * (the `Job` object of `PUT /v1/jobs`, Nomad's JSON API shape: Go field
   * names, durations in nanoseconds) as returned by the previous one.
   *
   * Return the job: the same object to accept it, or a changed copy (add
   * `Constraints`, change `Datacenters`, add `Meta`…). Do not mutate the
   * argument. The result must still pass svc's strict job validator
   * (jobs/validate.ts): a job that fails it is a `plugin_error` naming this
   * plugin and each broken path. Returning nothing is an error.
   */
  transformJob(job: NomadJob, context: JobTransformContext): NomadJob;

  /**
   * Kind: **parallel**. Runs after something happened (a deployment became
   * ready or stopped, a container started, stopped or failed). All plugins
   * are called concurrently and the emitter waits until all have settled,
   * so keep handlers short. The return value is ignored. A throw is
   * reported (with the plugin and hook) and never stops the platform or the
   * other plugins. Ignore event types you do not know: new ones may come
   * without an API version change.
   */
  onEvent(event: PlatformEvent): void;
}

export type HookName = keyof FunctionPluginHooks;

/** Hooks whose first non-null result wins; later plugins are skipped. */
export type FirstHooks = 'authenticate' | 'resolveRoute';
/** Hooks that chain: each receives the previous plugin's result as its first argument. */
export type SequentialHooks = 'authorizeDeploy' | 'transformJob';
/** Hooks that all run concurrently; results are ignored. */
export type ParallelHooks = Exclude<HookName, FirstHooks | SequentialHooks>;

export type HookKind = 'first' | 'sequential' | 'parallel';
type KindOf<H extends HookName> = H extends FirstHooks ? 'first' : H extends SequentialHooks ? 'sequential' : 'parallel';

/**
 * Kind of every hook (a `Record<HookName, HookKind>`). Typed so that the
 * compiler rejects a missing hook or a kind that disagrees with the unions; the host also uses its keys to
 * reject unknown hook names at registration.
 */
export const hookKinds: { readonly [H in HookName]: KindOf<H> } = Object.freeze({
  authenticate: 'first',
  resolveRoute: 'first',
  authorizeDeploy: 'sequential',
  transformJob: 'sequential',
  onEvent: 'parallel',
});

export type HookArgs<H extends HookName> = Parameters<FunctionPluginHooks[H]>;
export type HookResult<H extends HookName> = ReturnType<FunctionPluginHooks[H]>;

/** A hook implementation: the declared signature, sync or async. */
export type HookHandler<H extends HookName> = (...args: HookArgs<H>) => HookResult<H> | Promise<HookResult<H>>;

/** Position of one hook relative to the same hook of other plugins in its `enforce` tier. */
export type HookOrder = 'pre' | 'post';

/** A hook is a function, or `{ handler, order }` to move it within its tier. */
export type ObjectHook<F> = F | { readonly handler: F; readonly order?: HookOrder };

export type PluginHooks = { [H in HookName]: ObjectHook<HookHandler<H>> };

export interface Plugin {
  /** `scope:kebab-name`, e.g. `svc:auth-token`, `acme:audit-log`. Unique in one host; used in every error. */
  readonly name: string;
  /** The plugin API major version this plugin targets; must equal `PLUGIN_API_VERSION`. */
  readonly apiVersion: number;
  /**
   * Tier of all of this plugin's hooks: `pre` plugins run before normal ones,
   * `post` plugins after. Within a tier, plugins keep their registration order.
   */
  readonly enforce?: 'pre' | 'post';
  readonly hooks?: Partial<PluginHooks>;
  /**
   * Named autoscaling policies this plugin provides, name → `ScalingPolicy`.
   * Names are lower-case kebab (`queue-depth`, `acme-burst`) and unique
   * across all plugins; the config setting `scalingPolicy` picks one by name
   * for every deployment (built in: `queue-depth`).
   */
  readonly scalingPolicies?: Readonly<Record<string, ScalingPolicy>>;
  /**
   * Named client exporters this plugin provides, name → `ClientExporter`.
   * The name is what `svc app export --language <name>` picks (built in:
   * `python`); names are lower-case kebab and unique across all plugins.
   */
  readonly exporters?: Readonly<Record<string, ClientExporter>>;
}
