/** The OpenAPI facts of the routes in apps.ts, for docs/openapi.json (core/api/openapi.ts). */
import { answer, APP, BAD_QUERY, error, listOf, NAME_INVALID, ref, UNAUTHORIZED } from './shared.js';
import type { Operation, Response } from './types.js';

const NO_SUCH_APP: Response = error("`not_found`: the caller's workspace has no such app (an app of another workspace is not found either).");

export const listApps: Operation = {
  operationId: 'listApps',
  summary: "The deployed apps of the caller's workspace, by name.",
  responses: {
    200: answer('The apps.', listOf('apps', ref('AppSummary'))),
    400: BAD_QUERY,
    401: UNAUTHORIZED,
  },
};

export const getApp: Operation = {
  operationId: 'getApp',
  summary: 'An app with its deployments, their URLs, status, versions and containers.',
  parameters: [APP],
  responses: { 200: answer('The app.', ref('App')), 400: BAD_QUERY, 401: UNAUTHORIZED, 404: NO_SUCH_APP, 422: NAME_INVALID },
};

export const pauseApp: Operation = {
  operationId: 'pauseApp',
  summary: 'Pause the app: every workload stops, definitions kept; its URLs answer 503 `app_paused` until a resume or a deploy.',
  parameters: [APP],
  responses: { 200: answer('The app afterwards.', ref('App')), 400: BAD_QUERY, 401: UNAUTHORIZED, 404: NO_SUCH_APP, 422: NAME_INVALID },
};

export const resumeApp: Operation = {
  operationId: 'resumeApp',
  summary: "Start a paused app's workloads again at their versions (stopped deployments stay stopped).",
  parameters: [APP],
  responses: {
    200: answer('The app afterwards.', ref('App')),
    400: BAD_QUERY,
    401: UNAUTHORIZED,
    404: NO_SUCH_APP,
    422: NAME_INVALID,
    500: error('`container_failed`, `image_build_failed`: a workload could not start; the app stays paused.'),
  },
};

export const deleteApp: Operation = {
  operationId: 'deleteApp',
  summary: 'Delete the app: its deployments, records and containers; its URLs answer 404 from now on.',
  parameters: [APP],
  responses: { 204: { description: 'Deleted.' }, 400: BAD_QUERY, 401: UNAUTHORIZED, 404: NO_SUCH_APP, 422: NAME_INVALID },
};
