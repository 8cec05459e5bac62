/**
 * Deployed apps of the caller's workspace: list, describe, pause, resume,
 * delete. The workspace is always the principal's, so another workspace's
 * app is `not_found`, exactly like one that does not exist.
 */
import type { DeploymentRef } from '../../model/deployment-keys.js';
import type { Deployment } from '../../services/deployments/types.js';
import { SvcError } from '../../model/errors.js';
import type { Principal } from '../../infra/plugin/types.js';
import { deploymentRecords, describeApp, summarizeApp } from './app-view.js';
import { answer, APP, BAD_QUERY, error, listOf, NAME_INVALID, ref } from './openapi/shared.js';
import type { Operation, Response } from './openapi/types.js';
import type { ApiRoute, ApiServices } from './types.js';

const NO_SUCH_APP: Response = error(
  "`not_found`: the caller's workspace has no such app (an app of another workspace is not found either).",
);

const pauseApp: Operation = {
  operationId: 'pauseApp',
  summary: 'Pause the app: every workload stops, definitions kept; its URLs answer 503 `app_paused` until a resume or a deploy.',
  parameters: [APP],
  responses: { 200: answer('The app afterwards.', ref('App')), 400: BAD_QUERY, 404: NO_SUCH_APP, 422: NAME_INVALID },
};

const resumeApp: Operation = {
  operationId: 'resumeApp',
  summary: "Start a paused app's workloads again at their versions (stopped deployments stay stopped).",
  parameters: [APP],
  responses: {
    200: answer('The app afterwards.', ref('App')),
    400: BAD_QUERY,
    404: NO_SUCH_APP,
    422: NAME_INVALID,
    500: error('`container_failed`, `image_build_failed`: a workload could not start; the app stays paused.'),
  },
};

export const appRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/apps',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'listApps',
      summary: "The deployed apps of the caller's workspace, by name.",
      responses: {
        200: answer('The apps.', listOf('apps', ref('AppSummary'))),
        400: BAD_QUERY,
      },
    },
    async handle({ principal }, services) {
      const records = new Map((await deploymentRecords(services).apps(principal.workspace)).map((record) => [record.name, record]));
      const mine = services.deployments.list().filter((d) => d.ref.workspace === principal.workspace && d.ref.stage === 'deployed');
      const apps = mine.map((deployment) => summarizeApp(deployment, records.get(deployment.ref.app)));
      apps.sort((a, b) => a.name.localeCompare(b.name));
      return { status: 200, body: { apps } };
    },
  },
  {
    method: 'GET',
    path: '/apps/:app',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getApp',
      summary: 'An app with its deployments, their URLs, status, versions and containers.',
      parameters: [APP],
      responses: { 200: answer('The app.', ref('App')), 400: BAD_QUERY, 404: NO_SUCH_APP, 422: NAME_INVALID },
    },
    async handle({ params, principal }, services) {
      return { status: 200, body: await describeApp(requireApp(params, principal, services), services) };
    },
  },
  // Pause and resume differ only in the transition they apply: both answer the app as it now is.
  ...(['pause', 'resume'] as const).map(
    (transition): ApiRoute => ({
      method: 'POST',
      path: `/apps/:app/${transition}`,
      auth: 'token',
      body: 'none',
      openapi: transition === 'pause' ? pauseApp : resumeApp,
      async handle({ params, principal }, services) {
        return { status: 200, body: await describeApp(await services.deployments[transition](appRef(params, principal)), services) };
      },
    }),
  ),
  {
    method: 'DELETE',
    path: '/apps/:app',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'deleteApp',
      summary: 'Delete the app: its deployments, records and containers; its URLs answer 404 from now on.',
      parameters: [APP],
      responses: { 204: { description: 'Deleted.' }, 400: BAD_QUERY, 404: NO_SUCH_APP, 422: NAME_INVALID },
    },
    async handle({ params, principal }, services) {
      await services.deployments.remove(appRef(params, principal));
      return { status: 204 };
    },
  },
];

/** The caller's deployed app named in the path (the router has checked the name: `APP`). */
export function appRef(params: Readonly<Record<string, string>>, principal: Principal): DeploymentRef {
  return { workspace: principal.workspace, app: params.app!, stage: 'deployed' };
}

/** The caller's deployed app named in the path, or `not_found`. */
export function requireApp(params: Readonly<Record<string, string>>, principal: Principal, services: ApiServices): Deployment {
  const ref = appRef(params, principal);
  const deployment = services.deployments.get(ref);
  if (deployment === null) throw noApp(ref);
  return deployment;
}

export function noApp(ref: DeploymentRef): SvcError {
  return new SvcError('not_found', `no app ${ref.app} in workspace ${ref.workspace}.`, {
    hint: 'GET /api/v1/apps lists the apps of your workspace.',
  });
}
