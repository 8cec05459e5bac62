/**
 * An app's history and undo: the versions kept of each workload with what each changed
 * (`svc app history`), a rollback to an earlier version (`svc app rollback`), and fresh containers
 * of the versions running (`svc app rollover`). Rollback and rollover switch as a deploy does:
 * the new containers start, the route moves, the old ones drain.
 */
import { appHistory } from '../../services/deployments/history.js';
import { appRef, noApp, requireApp } from './apps.js';
import { deploymentRecords, describeApp } from './app-view.js';
import { answer, APP, BAD_JSON_BODY, BAD_QUERY, error, json, listOf, NAME_INVALID, ref } from './openapi/shared.js';
import type { Response } from './openapi/types.js';
import type { ApiRoute } from './types.js';

const NO_SUCH_APP: Response = error(
  "`not_found`: the caller's workspace has no such app (an app of another workspace is not found either), or no such version (the message lists those kept).",
);
const START_FAILED: Response = error(
  '`container_failed`, `image_build_failed`: a workload could not start; the app runs as it did before the request.',
);

export const appHistoryRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/apps/:app/history',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getAppHistory',
      summary: 'The versions kept of each workload of the app, newest first: when, by whom, what changed, and which one runs.',
      parameters: [APP],
      responses: {
        200: answer('The history.', listOf('versions', ref('AppHistoryEntry'))),
        400: BAD_QUERY,
        404: NO_SUCH_APP,
        422: NAME_INVALID,
      },
    },
    async handle({ params, principal }, services) {
      const { workspace, app } = requireApp(params, principal, services).ref;
      return { status: 200, body: { versions: appHistory(await deploymentRecords(services).deployments(workspace, app)) } };
    },
  },
  {
    method: 'POST',
    path: '/apps/:app/rollback',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'rollbackApp',
      summary:
        "Run an earlier version again: each workload that keeps `version` (left out: each workload's version before the one it runs), from that version's code and image, switched in with no failed request.",
      parameters: [APP],
      requestBody: {
        required: false,
        content: json({
          type: 'object',
          additionalProperties: false,
          properties: { version: { type: 'integer', minimum: 1, description: 'The version to run again; left out: the one before.' } },
        }),
      },
      responses: {
        200: answer('The app afterwards.', ref('App')),
        400: BAD_JSON_BODY,
        404: NO_SUCH_APP,
        409: error('`conflict`: every workload that keeps the version runs it already.'),
        422: NAME_INVALID,
        500: START_FAILED,
      },
    },
    async handle({ params, principal, body }, services) {
      const ref = appRef(params, principal);
      if (services.deployments.get(ref) === null) throw noApp(ref);
      const version = (body as { version?: number } | undefined)?.version;
      return { status: 200, body: await describeApp(await services.deployments.rollback(ref, version), services) };
    },
  },
  {
    method: 'POST',
    path: '/apps/:app/rollover',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'rolloverApp',
      summary: 'Fresh containers for every running workload of the app, at the version each runs, switched in with no failed request.',
      parameters: [APP],
      responses: { 200: answer('The app afterwards.', ref('App')), 400: BAD_QUERY, 404: NO_SUCH_APP, 422: NAME_INVALID, 500: START_FAILED },
    },
    async handle({ params, principal }, services) {
      const ref = requireApp(params, principal, services).ref;
      return { status: 200, body: await describeApp(await services.deployments.rollover(ref), services) };
    },
  },
];
