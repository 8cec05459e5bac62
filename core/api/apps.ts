/**
 * Deployed apps of the caller's workspace: list, describe, pause, resume,
 * delete. The workspace is always the principal's, so another workspace's
 * app is `not_found`, exactly like one that does not exist.
 */
import type { DeploymentRef } from '../deployments/keys.js';
import type { Deployment } from '../deployments/types.js';
import { SvcError } from '../errors.js';
import type { Principal } from '../plugin/types.js';
import { checkName } from '../workspaces/names.js';
import { deploymentRecords, describeApp, summarizeApp } from './app-view.js';
import * as doc from './openapi/apps.js';
import type { ApiRoute, ApiServices } from './types.js';

export const appRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/apps',
    auth: 'token',
    body: 'none',
    openapi: doc.listApps,
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
    openapi: doc.getApp,
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
      openapi: transition === 'pause' ? doc.pauseApp : doc.resumeApp,
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
    openapi: doc.deleteApp,
    async handle({ params, principal }, services) {
      await services.deployments.remove(appRef(params, principal));
      return { status: 204 };
    },
  },
];

/** The caller's deployed app named in the path; `name_invalid` (422) for a name that breaks the rule. */
export function appRef(params: Readonly<Record<string, string>>, principal: Principal): DeploymentRef {
  return { workspace: principal.workspace, app: checkName('app', params['app']), stage: 'deployed' };
}

/** The caller's deployed app named in the path, or `not_found`. */
export function requireApp(params: Readonly<Record<string, string>>, principal: Principal, services: ApiServices): Deployment {
  const ref = appRef(params, principal);
  const deployment = services.deployments.get(ref);
  if (deployment === null) throw noApp(ref);
  return deployment;
}

export function noApp(ref: DeploymentRef): SvcError {
  return new SvcError('not_found', `no app ${ref.app} in workspace ${ref.workspace}.`, { hint: 'GET /api/v1/apps lists the apps of your workspace.' });
}

