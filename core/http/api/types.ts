/**
 * Control-plane API types: what a route declares (method, path, whether it
 * needs a principal, what body it reads, its request and answer schemas) and what its
 * handler gets and gives. Routes are plain data, so the router, the OpenAPI
 * generator and the docs test all read the same list.
 */
import type { SchedulerDriver } from '../../infra/scheduler/types.js';
import type { Volumes } from '../../services/volumes/volumes.js';
import type { AppSpec } from '../../model/workload/types.js';
import type { ScheduledRunSource } from '../../services/schedules/nomad-runs.js';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Autoscaler } from '../../services/autoscale/controller.js';
import type { LastHour } from '../../infra/metrics/last-hour.js';
import type { ArtifactVerifier } from '../../infra/bundles/artifact-url.js';
import type { BundleStore } from '../../infra/bundles/store.js';
import type { DomainDirectory } from '../../model/domains/types.js';
import type { CallGroups } from '../../services/calls/call-groups.js';
import type { CallService } from '../../services/calls/calls.js';
import type { DeploymentManager } from '../../services/deployments/manager.js';
import type { DeploymentLogs } from '../../infra/logs/deployment-logs.js';
import type { Principal } from '../../infra/plugin/types.js';
import type { PluginHost } from '../../infra/plugin/host.js';
import type { Previews } from '../../services/runs/previews.js';
import type { RunManager } from '../../services/runs/runs.js';
import type { MapManager } from '../../services/maps/maps.js';
import type { ControlPlane } from './control-plane.js';
import type { Operation } from './openapi/types.js';
import type { RateLimit } from './rate-limit.js';
import type { UsagePrices } from '../../services/usage/prices.js';
import type { QuotaBook } from '../../services/workspaces/quota-book.js';

/** Every route lives under this prefix; a breaking change gets a new one. */
export const API_PREFIX = '/api/v1';

export type ApiMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * - `none`: the route reads no body;
 * - `json`: a JSON object (or nothing, read as `{}`); unknown fields are the handler's to refuse;
 * - `oauth`: JSON or `application/x-www-form-urlencoded` (OAuth clients send forms), and
 *   errors in OAuth's shape (`{"error", "error_description"}`, RFC 6749 §5.2);
 * - `bundle`: a raw `application/gzip` upload, handed to the handler as a stream
 *   (`request.upload`), limited to `ApiServices.maxBundleBytes` (413 `bundle_too_large`);
 * - `call`: a pickled function call (`application/vnd.svc.call+pickle`), handed over as a
 *   stream (`request.upload`), limited to `ApiServices.maxCallBytes` (413 `payload_too_large`);
 * - `ndjson`: `application/x-ndjson` lines (a map's inputs), handed over as a stream
 *   (`request.upload`), limited to `ApiServices.maxCallBytes` like a call;
 * - `file`: a raw `application/octet-stream` file for a volume, handed over as a stream
 *   (`request.upload`), limited to `ApiServices.maxVolumeFileBytes` (the volumes' own limits apply too).
 */
export type BodyKind = 'none' | 'json' | 'oauth' | 'bundle' | 'call' | 'ndjson' | 'file';

/** The lifecycle of deployed apps, as the API drives it. */
export type DeploymentLifecycle = Pick<
  DeploymentManager,
  | 'list'
  | 'get'
  | 'deploy'
  | 'plan'
  | 'pause'
  | 'resume'
  | 'stopWorkload'
  | 'deleteWorkload'
  | 'remove'
  | 'restartSecretUsers'
  | 'volumeUsers'
  | 'rollback'
  | 'rollover'
  | 'scaleWorkload'
>;

/** What the upload routes need of the bundle service (core/infra/bundles/service.ts). */
export interface BundleUploads {
  readonly store: Pick<BundleStore, 'has' | 'putStream' | 'pathOf'>;
  /** Extracts a stored bundle once, refusing it (`bundle_invalid`, `bundle_too_large`) when unsafe. */
  unpack(sha256: string): Promise<void>;
}

/** What every handler gets. */
export interface ApiServices {
  readonly plugins: PluginHost;
  readonly controlPlane: Pick<
    ControlPlane,
    'store' | 'workspaces' | 'accounts' | 'tokens' | 'signIn' | 'sessions' | 'members' | 'devices' | 'secrets' | 'callbackSecrets'
  >;
  /** The address browsers reach svc at (`publicUrl`), when configured: an `https:` one makes the dashboard's cookies Secure. */
  readonly publicUrl: string | null;
  readonly deployments: DeploymentLifecycle;
  readonly bundles: BundleUploads;
  /** Largest bundle upload, in bytes (the size of the tar.gz). */
  readonly maxBundleBytes: number;
  /** Spawned calls: recorded, run by the leader, kept for a while. */
  readonly calls: Pick<CallService, 'spawn' | 'checkCallback' | 'get' | 'list' | 'outcome' | 'logs' | 'cancel'>;
  /** Call groups (`spawn_map`): many inputs, each a spawned call, sent in batches. */
  readonly callGroups: Pick<CallGroups, 'create' | 'add' | 'get' | 'members' | 'cancel'>;
  /** Remote runs of functions, and previews. */
  readonly runs: Pick<RunManager, 'create' | 'list' | 'get' | 'logKey' | 'call' | 'end' | 'volumeUsers' | 'attach'>;
  /** Maps of remote runs: a function called once per input, inputs and outputs streamed. */
  readonly maps: Pick<MapManager, 'create' | 'get' | 'ofApp' | 'inputs' | 'outputs' | 'cancel'>;
  /** Refuses a schedule this platform cannot run before a deploy changes anything (on Nomad: a period no cron spec writes). */
  readonly checkSchedules?: (spec: AppSpec) => void;
  /** Scheduled runs where Nomad runs the schedules (read from Nomad); absent or null: the state store's history. */
  readonly scheduledRuns?: ScheduledRunSource | null;
  readonly previews: Pick<Previews, 'put' | 'get' | 'remove' | 'idleTimeoutSeconds' | 'expiresAt'>;
  /** Largest pickled call, in bytes (the gateway's body limit). */
  readonly maxCallBytes: number;
  /** The workspaces' volumes and their files. */
  readonly volumes: Pick<Volumes, 'create' | 'list' | 'get' | 'delete' | 'ls' | 'put' | 'open' | 'remove'>;
  /** Largest file one upload to a volume may be, in bytes (the most a volume holds). */
  readonly maxVolumeFileBytes: number;
  readonly autoscaler: Pick<Autoscaler, 'status' | 'quotaUse' | 'waitReason'>;
  /** The per-workspace quotas in force, and the operator's changes of them. */
  readonly quotas: Pick<QuotaBook, 'quotaOf' | 'sourceOf' | 'set'>;
  /** The operator's prices of usage (`usagePrices`): usage answers add a cost with them; null: none. */
  readonly usagePrices: UsagePrices | null;
  /** Days of usage the server keeps (`usageRetentionDays`): the furthest back a usage query reaches. */
  readonly usageRetentionDays: number;
  /** Each workload's last hour in this process, per minute (the dashboard's charts). */
  readonly lastHour: Pick<LastHour, 'read'>;
  /** The scheduler's side of containers: stop one, what each uses, commands and terminals in one (`svc container`, `svc shell`). */
  readonly containers: Pick<SchedulerDriver, 'stop' | 'usage' | 'exec' | 'terminal' | 'status'>;
  /** Each deployment's log lines, to read and follow. */
  readonly logs: Pick<DeploymentLogs, 'lines' | 'subscribe' | 'add'>;
  /** Custom domains (the built-in plugin svc:custom-domains provides it); null when it is not loaded. */
  readonly domains?: DomainDirectory | null;
  /** Checks signed bundle download URLs (core/infra/bundles/artifact-url.ts); absent unless svc runs workloads on Nomad. */
  readonly artifacts?: ArtifactVerifier;
}

export interface PublicRequest {
  /** Path parameters (`:id`), decoded. */
  readonly params: Readonly<Record<string, string>>;
  /** The parsed body: `{}` when there is none or the route reads none (or reads a `bundle`). */
  readonly body: Readonly<Record<string, unknown>>;
  readonly headers: IncomingHttpHeaders;
  /** The query's parameters: only those the route declares (the router refused any other, and checked these). */
  readonly query: URLSearchParams;
  /**
   * `bundle`, `call` and `ndjson` routes: opens the body, counted against the bundle limit. Check the
   * headers first: a body never opened is discarded by Node. Null on other routes.
   */
  readonly upload: (() => Readable) | null;
  /** Aborted when the client's connection closes (a call waiting for its run gives up). */
  readonly signal: AbortSignal;
  /** The request's id (`X-Request-Id`), passed on to containers. */
  readonly requestId: string;
}

export interface AuthenticatedRequest extends PublicRequest {
  /** Who calls, from an `authenticate` hook; every object the handler touches is in `principal.workspace`. */
  readonly principal: Principal;
}

export interface ApiAnswer {
  readonly status: number;
  /** Sent as JSON; absent for 204. A Readable is streamed as it is (set its Content-Type in `headers`); Koa destroys it when the client goes. */
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** A streamed body whose first bytes may come much later (a map's outputs): its head is sent at once, so the client knows it is connected. */
  readonly flushHeaders?: boolean;
}

interface RouteBase {
  readonly method: ApiMethod;
  /** Below `API_PREFIX`, with `:name` segments: `/tokens/:id`. */
  readonly path: string;
  readonly body: BodyKind;
  /** Requests one client address may send (429 `rate_limited` beyond); for routes anyone may call. */
  readonly rateLimit?: RateLimit;
  /**
   * Its request and answers as JSON Schema, with what docs/openapi.json says of
   * them, declared once here: the router checks JSON bodies by them, openapi.ts
   * writes docs/openapi.json from them, the tests check every answer by them.
   */
  readonly openapi: Operation;
}

export type ApiRoute =
  | (RouteBase & { readonly auth: 'token'; handle(request: AuthenticatedRequest, services: ApiServices): Promise<ApiAnswer> })
  | (RouteBase & { readonly auth: 'none'; handle(request: PublicRequest, services: ApiServices): Promise<ApiAnswer> });

/** Answers that carry a secret must not be stored by caches or proxies (RFC 6749 §5.1 asks the same). */
export const NO_STORE: Readonly<Record<string, string>> = Object.freeze({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
