/**
 * The spawned calls of an app (`svc app calls`): newest first, of one status or all, read from
 * the workspace's call records (core/services/calls), so any replica answers. An app is known by
 * its deployment or by its calls (code spawned from an upload has no deployment); an app of
 * another workspace is `not_found`, like one that never was.
 */
import { SvcError } from '../../model/errors.js';
import type { CallFilter } from '../../services/calls/calls.js';
import { CALL_STATUSES, type CallStatus, type CallView } from '../../services/calls/types.js';
import type { MapView } from '../../services/maps/types.js';
import type { DeploymentRef } from '../../model/deployment-keys.js';
import { appRef, noApp } from './apps.js';
import { answer, APP, error, listOf, NAME_INVALID, ref, wholeNumber } from './openapi/shared.js';
import type { Parameter } from './openapi/types.js';
import type { ApiRoute, ApiServices } from './types.js';

/** How many calls one answer holds unless `limit` says otherwise, and the most it may say. */
export const DEFAULT_CALL_LIST_LIMIT = 100;
export const MAX_CALL_LIST_LIMIT = 1000;

const STATUS: Parameter = {
  name: 'status',
  in: 'query',
  required: false,
  schema: { type: 'string', enum: [...CALL_STATUSES] },
  description: 'Only the calls of this status.',
  refusal: {
    code: 'bad_request',
    refuse: notACallStatus,
  },
};
// A whole number from 1 to 1000, as the query spells it (no sign, no leading zero).
const LIMIT = wholeNumber(
  'limit',
  '^([1-9][0-9]{0,2}|1000)$',
  `from 1 to ${MAX_CALL_LIST_LIMIT}`,
  `The most calls to answer, 1 to ${MAX_CALL_LIST_LIMIT} (default ${DEFAULT_CALL_LIST_LIMIT}): the newest.`,
  `Leave it out for the newest ${DEFAULT_CALL_LIST_LIMIT}.`,
);

export const appCallRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/apps/:app/calls',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'listAppCalls',
      summary:
        "The app's spawned calls in the caller's workspace, newest first, without their results (`GET /calls/:id` has a JSON call's): those of `status`, at most `limit`.",
      pathParameters: [APP],
      parameters: [STATUS, LIMIT],
      responses: {
        200: answer('The calls.', ref('CallList')),
        400: error('`bad_request`: `status` is not a call status, `limit` not a whole number from 1 to 1000, or another query parameter.'),
        404: error(
          "`not_found`: the caller's workspace has no such app: none deployed, and no call of it kept (an app of another workspace is not found either).",
        ),
        422: NAME_INVALID,
      },
    },
    async handle({ params, principal, query }, services) {
      const status = (query.get('status') || undefined) as CallStatus | undefined;
      const limit = Number(query.get('limit') || DEFAULT_CALL_LIST_LIMIT);
      const ref = appRef(params, principal);
      const mapped = services.maps.ofApp(ref.workspace, ref.app).length > 0;
      return { status: 200, body: { calls: await appCalls(services, ref, { status, limit }, mapped) } };
    },
  },
  {
    method: 'GET',
    path: '/apps/:app/maps',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'listAppMaps',
      summary:
        "The app's maps (`f.map(...)`) that this server runs or ended in the last 10 minutes, newest first, each with its inputs by where they are: what `svc app calls` and the dashboard's Calls page show beside the calls. Maps live in the memory of the server that runs them.",
      pathParameters: [APP],
      responses: {
        200: answer('The maps.', listOf('maps', ref('Map'))),
        404: error(
          "`not_found`: the caller's workspace has no such app: none deployed, no call of it kept and no map of it here (an app of another workspace is not found either).",
        ),
        422: NAME_INVALID,
      },
    },
    async handle({ params, principal }, services) {
      return { status: 200, body: { maps: await appMaps(services, appRef(params, principal)) } };
    },
  },
];

/**
 * The app's calls of `filter`, newest first (`svc app calls`, the dashboard's Calls page);
 * `not_found` unless the app is deployed or has calls kept (of any status) or, with `alsoKnown`,
 * is known otherwise (the maps of its runs).
 */
export async function appCalls(
  services: Pick<ApiServices, 'calls' | 'deployments'>,
  ref: DeploymentRef,
  filter: CallFilter,
  alsoKnown = false,
): Promise<CallView[]> {
  const calls = await services.calls.list(ref.workspace, ref.app, filter);
  if (calls.length === 0 && !alsoKnown && services.deployments.get(ref) === null) {
    // Known by its calls alone: some other status may have them.
    const any = filter.status === undefined ? [] : await services.calls.list(ref.workspace, ref.app, { limit: 1 });
    if (any.length === 0) throw noApp(ref);
  }
  return calls;
}

/** The app's maps this server runs or ended lately; `not_found` for an app the workspace knows neither by them nor otherwise. */
export async function appMaps(services: Pick<ApiServices, 'calls' | 'deployments' | 'maps'>, ref: DeploymentRef): Promise<MapView[]> {
  const maps = services.maps.ofApp(ref.workspace, ref.app);
  if (maps.length === 0) await appCalls(services, ref, { limit: 1 });
  return maps;
}

/** `value` as a call status, or `bad_request` naming those there are (the `status` query parameter). */
export function callStatus(value: unknown): CallStatus {
  if (typeof value === 'string' && (CALL_STATUSES as readonly string[]).includes(value)) return value as CallStatus;
  throw notACallStatus(value);
}

function notACallStatus(value: unknown): SvcError {
  return new SvcError('bad_request', `status=${JSON.stringify(value)} is not a call status; it is one of ${CALL_STATUSES.join(', ')}.`, {
    details: { field: 'status' },
  });
}
