/**
 * How a leader's gateway route is stored for the other replicas: one key per
 * route, `gateway/routes/<prefix without its leading "/">`, holding
 * `{"version": 1, "entry": {...}, "servesHost": bool}`. An offline route's
 * error is stored as `{code, message, hint?, headers?}` and becomes an
 * `SvcError` again on decode, so a follower answers exactly as the leader does.
 * The workload is plain data and is stored as it is.
 */
import { errorCodes, SvcError, type ErrorCode } from '../../model/errors.js';
import { stages, type DeploymentRef, type Stage } from '../../model/deployment-keys.js';
import type { FollowedRoute } from '../gateway/route-table.js';
import type { RouteEntry } from '../gateway/types.js';
import type { Workload } from '../../model/workload/types.js';

export const ROUTES_PREFIX = 'gateway/routes/';
const ROUTE_FORMAT_VERSION = 1;

interface StoredOffline {
  readonly code: ErrorCode;
  readonly message: string;
  readonly hint?: string;
  readonly headers?: Record<string, string>;
}

interface StoredRoute {
  readonly version: typeof ROUTE_FORMAT_VERSION;
  readonly entry: {
    readonly ref: DeploymentRef;
    readonly workload: Workload;
    readonly unit: string;
    readonly prefix: string;
    readonly host?: string;
    readonly offline?: StoredOffline;
  };
  readonly servesHost: boolean;
}

/** `/default/quickstart/greet` → `gateway/routes/default/quickstart/greet`. */
export function routeKey(prefix: string): string {
  return ROUTES_PREFIX + prefix.slice(1);
}

/** The stored JSON text of a route (fields in a fixed order, so equal routes give equal text). */
export function encodeRoute(route: FollowedRoute): string {
  const { entry } = route;
  const stored: StoredRoute = {
    version: ROUTE_FORMAT_VERSION,
    entry: {
      ref: { workspace: entry.ref.workspace, app: entry.ref.app, stage: entry.ref.stage },
      workload: entry.workload,
      unit: entry.unit,
      prefix: entry.prefix,
      ...(entry.host ? { host: entry.host } : {}),
      ...(entry.offline ? { offline: encodeOffline(entry.offline) } : {}),
    },
    servesHost: route.servesHost,
  };
  return JSON.stringify(stored);
}

function encodeOffline(error: SvcError): StoredOffline {
  return {
    code: error.code,
    message: error.message,
    ...(error.hint === undefined ? {} : { hint: error.hint }),
    ...(Object.keys(error.headers).length === 0 ? {} : { headers: error.headers }),
  };
}

/**
 * Turns the stored text under `key` back into a route; throws `state_corrupt`
 * naming the key and the field when it is not a route this version wrote.
 */
export function decodeRoute(key: string, text: string): FollowedRoute {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw corrupt(key, 'is not valid JSON');
  }
  const route = object(key, parsed, null);
  if (route.version !== ROUTE_FORMAT_VERSION)
    throw corrupt(key, `has "version" ${JSON.stringify(route.version)}; this svc reads version ${ROUTE_FORMAT_VERSION} only`);
  const servesHost = route.servesHost;
  if (typeof servesHost !== 'boolean') throw corrupt(key, 'has no boolean "servesHost"');
  const fields = object(key, route.entry, '"entry"');
  const ref = object(key, fields.ref, '"entry.ref"');
  const stage = ref.stage;
  if (!(stages as readonly unknown[]).includes(stage))
    throw corrupt(key, `has "entry.ref.stage" ${JSON.stringify(stage)}, not one of ${stages.join(', ')}`);
  const prefix = string(key, fields, 'prefix');
  if (routeKey(prefix) !== key || !prefix.startsWith('/'))
    throw corrupt(key, `has "entry.prefix" ${JSON.stringify(prefix)}, which is not the prefix its key names`);
  const host = fields.host;
  if (host !== undefined && host !== null && typeof host !== 'string')
    throw corrupt(key, 'has an "entry.host" that is neither a string nor null');
  const entry: RouteEntry = {
    ref: { workspace: string(key, ref, 'workspace', 'entry.ref'), app: string(key, ref, 'app', 'entry.ref'), stage: stage as Stage },
    workload: object(key, fields.workload, '"entry.workload"') as unknown as Workload,
    unit: string(key, fields, 'unit'),
    prefix,
    ...(typeof host === 'string' ? { host } : {}),
    ...(fields.offline === undefined ? {} : { offline: decodeOffline(key, fields.offline) }),
  };
  return { entry, servesHost };
}

function decodeOffline(key: string, value: unknown): SvcError {
  const offline = object(key, value, '"entry.offline"');
  const code = offline.code;
  if (typeof code !== 'string' || !Object.hasOwn(errorCodes, code))
    throw corrupt(key, `has "entry.offline.code" ${JSON.stringify(code)}, which is no error code of this svc`);
  const message = string(key, offline, 'message', 'entry.offline');
  const hint = offline.hint;
  if (hint !== undefined && typeof hint !== 'string') throw corrupt(key, 'has an "entry.offline.hint" that is not a string');
  let headers: Record<string, string> | undefined;
  if (offline.headers !== undefined) {
    headers = { ...object(key, offline.headers, '"entry.offline.headers"') } as Record<string, string>;
    for (const [name, header] of Object.entries(headers)) {
      if (typeof header !== 'string') throw corrupt(key, `has "entry.offline.headers.${name}" that is not a string`);
    }
  }
  return new SvcError(code as ErrorCode, message, {
    ...(hint === undefined ? {} : { hint }),
    ...(headers === undefined ? {} : { headers }),
  });
}

type Fields = Readonly<Record<string, unknown>>;

/** `field` null: the whole value. */
function object(key: string, value: unknown, field: string | null): Fields {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw corrupt(key, field === null ? 'is not a JSON object' : `has a field ${field} that is not a JSON object`);
  return value as Fields;
}

function string(key: string, fields: Fields, field: string, parent = 'entry'): string {
  const value = fields[field];
  if (typeof value !== 'string') throw corrupt(key, `has no string "${parent}.${field}"`);
  return value;
}

function corrupt(key: string, problem: string): SvcError {
  return new SvcError('state_corrupt', `the stored gateway route ${JSON.stringify(key)} ${problem}`, {
    hint: 'The leader writes these keys; a route it cannot read is skipped until the leader stores it again (a leader rewrites its routes when it starts).',
    details: { key },
  });
}
