/**
 * The one error model of svc. Every failure that crosses a boundary (HTTP,
 * CLI, plugin) is an `SvcError` with a stable `code` from `errorCodes`.
 * Codes are never reused or renamed: clients match on them.
 * `docs/errors.md` documents every code; a test fails when one is missing.
 */

export interface ErrorCodeInfo {
  /** HTTP status used when the error reaches an HTTP client. */
  readonly status: number;
  /** One line: what the code means. */
  readonly summary: string;
}

export const errorCodes = {
  // Input from users and their tools
  bad_request: { status: 400, summary: 'The request is malformed.' },
  name_invalid: { status: 422, summary: 'A name (of a workspace, app or workload) is not a lowercase DNS label.' },
  invalid_json: { status: 400, summary: 'The request body is not valid JSON.' },
  invalid_arguments: { status: 422, summary: 'The JSON body does not match the function parameters.' },
  manifest_invalid: { status: 422, summary: 'The app manifest breaks one or more rules; every problem is listed with its path.' },
  manifest_failed: { status: 422, summary: 'Python could not load the app to describe it (syntax or import error, invalid option).' },
  config_invalid: { status: 400, summary: 'A configuration value (flag, SVC_* variable or config file) is invalid.' },
  payload_too_large: { status: 413, summary: 'The request body is larger than the gateway accepts.' },
  bundle_invalid: {
    status: 422,
    summary: 'A code bundle is malformed or unsafe to extract; the error names the entry and the rule it breaks.',
  },
  bundle_too_large: {
    status: 413,
    summary: 'A project or code bundle is larger than the configured limit (total size, one entry, or number of entries).',
  },
  bundle_failed: { status: 422, summary: 'The project could not be bundled (missing folder, unreadable file); the message says which.' },
  headers_too_large: { status: 431, summary: 'The request headers are larger than the gateway accepts.' },
  // Like nginx's 499: logged, never sent, since nobody is left to read it.
  client_closed: { status: 499, summary: 'The client closed the connection before the answer was ready; nothing is sent.' },
  usage_invalid: {
    status: 400,
    summary: 'A command-line argument or option is invalid (a duration, a deployment name, a flag combination); the message names it.',
  },
  confirmation_required: { status: 400, summary: 'A destructive command was not confirmed: answer yes at its prompt, or pass --yes.' },

  // Auth
  unauthorized: { status: 401, summary: 'A bearer token is missing, malformed, unknown or revoked.' },
  not_signed_in: {
    status: 401,
    summary: 'The CLI or the Python client found no token (SVC_TOKEN, `svc login` credentials, or a local owner token).',
  },
  forbidden: { status: 403, summary: 'The token is valid but may not reach this resource.' },
  plan_forbids_domain: {
    status: 403,
    summary:
      "A deploy sets `domain`, and the workspace's plan does not include custom domains (team and business do); nothing was deployed.",
  },
  not_operator: {
    status: 403,
    summary:
      "Only the server's operator (an instance-wide admin, at first the first owner account) may do this, such as changing a workspace's plan.",
  },
  login_denied: { status: 403, summary: '`svc login` stopped: the sign-in request was denied.' },
  login_expired: { status: 401, summary: '`svc login` stopped: the sign-in request expired before anyone approved it.' },
  artifact_url_invalid: {
    status: 403,
    summary:
      "A code bundle's download URL (the signed URL a Nomad task fetches its bundle from) is expired or was not signed by this server.",
  },

  // Routing
  not_found: { status: 404, summary: 'No app, workload or route answers at this URL.' },
  method_not_allowed: { status: 405, summary: 'The workload does not accept this HTTP method; see the Allow header.' },
  upgrade_required: { status: 426, summary: 'A realtime workload answers WebSocket connections only; a plain HTTP request gets this.' },
  domain_taken: { status: 409, summary: 'A deploy asks for a custom domain that another workspace has claimed; nothing was deployed.' },
  conflict: { status: 409, summary: 'The request conflicts with something that exists (for example a URL another deployment uses).' },
  call_cancelled: { status: 409, summary: 'The spawned call was cancelled before it ended: it has no result.' },
  volume_not_found: {
    status: 422,
    summary: 'A deploy or a run mounts a volume (`volumes=`) that its workspace does not have; nothing was deployed.',
  },
  gpu_unavailable: {
    status: 422,
    summary: 'A deploy asks for GPUs (`gpu=`) that this platform does not have, or not that many; the message lists its GPUs.',
  },
  volume_in_use: {
    status: 409,
    summary:
      'A volume that deployed workloads or remote runs mount cannot be deleted; the error names them (`force=true` deletes it anyway).',
  },
  disk_full: {
    status: 507,
    summary:
      "The disk holding svc's data directory is full: the write was refused and nothing of it kept; the message names the path and the space left. Writes work again once there is space, without a restart.",
  },
  volume_full: {
    status: 507,
    summary:
      "An upload would take a volume, or all of a workspace's volumes, past the size the operator allows (`volumeMaxBytes`, `workspaceVolumeBytes`).",
  },
  range_not_satisfiable: {
    status: 416,
    summary: "A download's `Range` asks for bytes past the file's end; `Content-Range` gives its size.",
  },
  call_expired: {
    status: 410,
    summary: 'The spawned call ended longer ago than svc keeps results (`callResultTtlSeconds`): its outcome is gone.',
  },
  call_interrupted: {
    status: 500,
    summary: "svc stopped (or its leader changed) while a spawned call ran, and the function's retries allow no more attempts.",
  },
  secret_not_found: {
    status: 404,
    summary: 'The workspace has no secret of this name (422 when a deploy names it; nothing was deployed).',
  },

  // Capacity and instances
  queue_full: { status: 429, summary: 'The deployment already holds max_pending_tasks queued requests.' },
  quota_exceeded: {
    status: 403,
    summary:
      'A deploy (403), or traffic needing a new container (429 with Retry-After), would take the workspace past a quota the operator set (`workspaceQuotas`: containers, CPU, memory); `details` names the quota, its limit and what is in use.',
  },
  too_many_runs: {
    status: 429,
    summary:
      'The workspace already holds as many remote runs as it may at once (`maxRunsPerWorkspace`, 20), or a class as many sets of parameters (`classParameterSets`, 8).',
  },
  too_many_maps: { status: 429, summary: 'The workspace already has as many maps running as it may at once (64).' },
  rate_limited: { status: 429, summary: 'Too many requests from one address to an API route anyone may call (device flow, sign-in).' },
  no_capacity: { status: 503, summary: 'No healthy container can take the request.' },
  starting: { status: 503, summary: 'The workload is starting and not healthy yet.' },
  app_paused: {
    status: 503,
    summary: 'The app is paused: its workloads are stopped and their definitions kept; a deploy or `svc app resume` brings them back.',
  },
  deployment_stopped: {
    status: 503,
    summary: 'The deployment (one workload) is stopped and its definition kept; deploying the workload starts it again.',
  },
  not_leader: { status: 503, summary: 'This svc replica cannot answer: it is a standby, or it cannot reach the replica that leads.' },
  shutting_down: {
    status: 503,
    summary: 'svc is stopping: workload URLs answer this while requests in flight finish, and the API takes no new deployment changes.',
  },
  crash_loop: { status: 503, summary: 'The containers of the workload keep exiting; svc retries with back-off.' },
  worker_crashed: { status: 502, summary: 'The container failed while handling the request.' },
  // 502 like worker_crashed: the gateway's upstream died; 507 would claim the gateway could not store something.
  memory_limit_exceeded: {
    status: 502,
    summary:
      "The worker handling the request was killed for going past its container's memory limit (the workload's `memory`); a fresh worker takes the next request.",
  },
  upstream_unreachable: { status: 502, summary: 'The gateway could not reach the container.' },
  server_unreachable: {
    status: 503,
    summary: 'The CLI or the Python client could not reach the svc server (connection refused, unknown host, network down).',
  },
  unexpected_response: {
    status: 502,
    summary: "The server answered something that is not svc's API (a proxy's error page, another program on that port).",
  },

  // Workload code
  handler_error: { status: 500, summary: 'The workload code raised an exception; the traceback is in the workload logs.' },
  timeout: { status: 504, summary: "The call ran past the workload's `timeout`; it was abandoned and the worker running it replaced." },

  // Platform
  image_build_failed: {
    status: 500,
    summary:
      'Building the runtime image (Python environment, or a docker image and its push to the registry) failed; the build log and message say why.',
  },
  python_unavailable: { status: 500, summary: 'The Python version an image asks for is not installed on this machine.' },
  container_failed: { status: 500, summary: 'A container exited or never became healthy.' },
  scheduler_unreachable: {
    status: 503,
    summary: 'svc could not reach the scheduler (the Nomad agent): connection refused, unknown host or no answer in time.',
  },
  nomad_rejected: {
    status: 502,
    summary:
      "Nomad refused a request of svc's Nomad driver (an invalid job, a count outside the group's scaling limits, an unknown namespace or region); the message is Nomad's own text.",
  },
  plugin_invalid: { status: 500, summary: 'A plugin could not be loaded or is not a valid svc plugin.' },
  plugin_incompatible: { status: 500, summary: 'A plugin targets a plugin API version this svc does not provide.' },
  plugin_error: { status: 500, summary: 'A plugin hook threw; the error names the plugin and the hook.' },
  // State store (core/infra/state)
  state_key_invalid: {
    status: 400,
    summary: 'A state store key or prefix breaks the key rules (empty, leading /, .. segment, control character, over 512 bytes).',
  },
  state_value_too_large: { status: 413, summary: 'A state store value is larger than 512 KiB.' },
  state_corrupt: { status: 500, summary: 'A state file is damaged; the error names the file and the byte offset and says how to recover.' },
  secrets_key_invalid: {
    status: 500,
    summary:
      'A secret cannot be sealed or opened: the server has no secrets key (state in Consul without one), lacks the key that sealed it, or the value was damaged or moved.',
  },
  data_format_newer: {
    status: 500,
    summary:
      "svc's data (the data dir's state, or Consul KV) was written by a newer svc in a data format this one cannot read; the message names both versions. Nothing was changed.",
  },
  state_locked: { status: 500, summary: "Another svc process holds the data dir's state store." },
  state_unavailable: { status: 503, summary: 'The state store cannot take the operation: it is closed, or the disk failed a write.' },
  internal: { status: 500, summary: 'An unexpected error inside svc.' },
} as const satisfies Record<string, ErrorCodeInfo>;

export type ErrorCode = keyof typeof errorCodes;

/** Codes whose message stays in the server log; see `SvcError#expose`. */
const HIDDEN_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['internal', 'plugin_error']);

export interface SvcErrorOptions {
  /** What the user can do about it. */
  hint?: string;
  /** Structured detail for machines (for example the list of manifest issues). */
  details?: unknown;
  cause?: unknown;
  /** Overrides the code's default HTTP status (rarely needed). */
  status?: number;
  /** Extra HTTP headers to send with the error (for example Allow, WWW-Authenticate). */
  headers?: Record<string, string>;
}

export class SvcError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly hint: string | undefined;
  readonly details: unknown;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: SvcErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SvcError';
    this.code = code;
    this.status = options.status ?? errorCodes[code].status;
    this.hint = options.hint;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  /**
   * False when the message may reveal internals (bugs, a plugin's own error
   * text): clients then get a generic message and the server log the real one.
   */
  get expose(): boolean {
    return !HIDDEN_CODES.has(this.code);
  }
}

export function isSvcError(value: unknown): value is SvcError {
  return value instanceof SvcError;
}

/** Wraps anything thrown into an SvcError, keeping SvcErrors as they are. */
export function toSvcError(value: unknown): SvcError {
  if (isSvcError(value)) return value;
  const message = value instanceof Error ? value.message : String(value);
  return new SvcError('internal', message, { cause: value });
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; hint?: string; details?: unknown };
}

/** The JSON body every HTTP error of svc carries. */
export function errorBody(error: SvcError): ErrorBody {
  const message = error.expose
    ? error.message
    : error.code === 'plugin_error'
      ? 'a plugin failed; the server log has the details'
      : 'internal error';
  const body: ErrorBody = { error: { code: error.code, message } };
  if (error.hint !== undefined) body.error.hint = error.hint;
  if (error.details !== undefined && error.expose) body.error.details = error.details;
  return body;
}
