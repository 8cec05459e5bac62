/**
 * Previews through the API (what `svc serve` asks a server for): put the
 * preview of an app (its first version, or the next: live reload), read it,
 * follow a workload's logs, end it. A preview ends by itself once idle for
 * its timeout; see core/runs/previews.ts.
 */
import type { DeploymentRef } from '../deployments/keys.js';
import { SvcError } from '../errors.js';
import type { Principal } from '../plugin/types.js';
import { DEFAULT_IDLE_TIMEOUT_SECONDS } from '../runs/types.js';
import { checkName } from '../workspaces/names.js';
import { deployableCode } from './app-deployments.js';
import { describeApp } from './app-view.js';
import { logsAnswer } from './deployment-logs.js';
import * as doc from './openapi/previews.js';
import type { ApiRoute, ApiServices } from './types.js';
import type { Deployment } from '../deployments/types.js';

export const previewRoutes: readonly ApiRoute[] = [
  {
    method: 'PUT',
    path: '/apps/:app/preview',
    auth: 'token',
    body: 'json',
    openapi: doc.putPreview,
    async handle({ params, body, principal }, services) {
      const ref = previewRef(params, principal);
      const { spec, bundle, inlineSecrets } = await deployableCode(body, ref.workspace, services, ref.app);
      const idleTimeoutSeconds = (body['idleTimeoutSeconds'] as number | null | undefined) ?? DEFAULT_IDLE_TIMEOUT_SECONDS;
      const deployment = await services.previews.put({ spec, bundleSha256: bundle, workspace: ref.workspace, principal, idleTimeoutSeconds, ...(inlineSecrets === undefined ? {} : { inlineSecrets }) });
      return { status: 200, body: await describePreview(deployment, services) };
    },
  },
  {
    method: 'GET',
    path: '/apps/:app/preview',
    auth: 'token',
    body: 'none',
    openapi: doc.getPreview,
    async handle({ params, principal }, services) {
      return { status: 200, body: await describePreview(requirePreview(previewRef(params, principal), services), services) };
    },
  },
  {
    method: 'DELETE',
    path: '/apps/:app/preview',
    auth: 'token',
    body: 'none',
    openapi: doc.deletePreview,
    async handle({ params, principal }, services) {
      const ref = previewRef(params, principal);
      requirePreview(ref, services);
      await services.previews.remove(ref);
      return { status: 204 };
    },
  },
  {
    method: 'GET',
    path: '/apps/:app/preview/deployments/:workload/logs',
    auth: 'token',
    body: 'none',
    openapi: doc.getPreviewLogs,
    async handle({ params, principal, headers }, services) {
      const ref = previewRef(params, principal);
      const workload = checkName('workload', params['workload']);
      const preview = requirePreview(ref, services);
      if (!preview.workloads.some((w) => w.name === workload)) {
        throw new SvcError('not_found', `the preview of ${ref.app} has no workload ${workload}.`, { hint: `GET /api/v1/apps/${ref.app}/preview lists its workloads.` });
      }
      return logsAnswer(services, { ...ref, workload }, headers);
    },
  },
];

function previewRef(params: Readonly<Record<string, string>>, principal: Principal): DeploymentRef {
  return { workspace: principal.workspace, app: checkName('app', params['app']), stage: 'preview' };
}

function requirePreview(ref: DeploymentRef, services: ApiServices): Deployment {
  const preview = services.previews.get(ref);
  if (preview === null) {
    throw new SvcError('not_found', `no preview of ${ref.app} in workspace ${ref.workspace}: it was never started, was ended, or ended after its idle timeout.`, {
      hint: `Start one with PUT /api/v1/apps/${ref.app}/preview (svc serve does).`,
    });
  }
  return preview;
}

/** The app view (its workloads at their preview URLs), with the preview's idle timeout and when it ends if unused. */
async function describePreview(deployment: Deployment, services: ApiServices) {
  const previews = services.previews;
  const expiresAt = previews.expiresAt(deployment.ref);
  return {
    ...(await describeApp(deployment, services)),
    idleTimeoutSeconds: previews.idleTimeoutSeconds(deployment.ref),
    expiresAt: expiresAt === null ? null : expiresAt.toISOString(),
  };
}
