/**
 * Previews through the API (what `svc serve` asks a server for): put the
 * preview of an app (its first version, or the next: live reload), read it,
 * follow a workload's logs, end it. A preview ends by itself once idle for
 * its timeout; see core/services/runs/previews.ts.
 */
import type { DeploymentRef } from '../../model/deployment-keys.js';
import { SvcError } from '../../model/errors.js';
import type { Principal } from '../../infra/plugin/types.js';
import { DEFAULT_IDLE_TIMEOUT_SECONDS } from '../../services/runs/types.js';
import { deployableCode } from './app-deployments.js';
import { describeApp } from './app-view.js';
import { logsAnswer } from './deployment-logs.js';
import {
  answer,
  APP,
  BAD_QUERY,
  CODE_CHECKS,
  error,
  json,
  LOG_LINES,
  MANIFEST_INVALID,
  NAME_INVALID,
  ref,
  SHUTTING_DOWN,
  WORKLOAD,
} from './openapi/shared.js';
import type { Response } from './openapi/types.js';
import type { ApiRoute, ApiServices } from './types.js';
import type { Deployment } from '../../services/deployments/types.js';

const NO_PREVIEW: Response = error(
  "`not_found`: the workspace has no preview of this app: never put, ended, or ended after its idle timeout (another workspace's is not found either).",
);

export const previewRoutes: readonly ApiRoute[] = [
  {
    method: 'PUT',
    path: '/apps/:app/preview',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'putPreview',
      summary:
        'Put the preview of the app (stage `preview`, at its `<app>--preview` URLs): its first version or the next one (live reload), switched in once healthy; workloads the new code no longer has leave it. Ends by itself once idle for its timeout; never durable.',
      parameters: [APP],
      requestBody: { required: true, content: json(ref('PreviewInput')) },
      leftToHandler: CODE_CHECKS,
      responses: {
        200: answer('The preview once it serves (also the first time).', ref('Preview')),
        400: error(
          '`bad_request` (an unknown or missing field, a wrong type, `bundle` not a sha256, `idleTimeoutSeconds` not a whole number from 1 to 86400, a manifest of another app: the message names both) or `invalid_json`.',
        ),
        404: error('`not_found`: the workspace has not uploaded the bundle (upload it first).'),
        409: error('`conflict`: a URL of the preview is taken by another deployment.'),
        422: MANIFEST_INVALID,
        500: error(
          '`image_build_failed`, `container_failed`: the new version could not start; a preview that was running keeps serving its version.',
        ),
        503: SHUTTING_DOWN,
      },
    },
    async handle({ params, body, principal }, services) {
      const ref = previewRef(params, principal);
      const { spec, bundle, inlineSecrets } = await deployableCode(body, ref.workspace, services, ref.app);
      const idleTimeoutSeconds = (body.idleTimeoutSeconds as number | null | undefined) ?? DEFAULT_IDLE_TIMEOUT_SECONDS;
      const deployment = await services.previews.put({
        spec,
        bundleSha256: bundle,
        workspace: ref.workspace,
        principal,
        idleTimeoutSeconds,
        ...(inlineSecrets === undefined ? {} : { inlineSecrets }),
      });
      return { status: 200, body: await describePreview(deployment, services) };
    },
  },
  {
    method: 'GET',
    path: '/apps/:app/preview',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getPreview',
      summary: 'The preview of the app, with its idle timeout and when it ends if unused; asking counts as using it.',
      parameters: [APP],
      responses: { 200: answer('The preview.', ref('Preview')), 400: BAD_QUERY, 404: NO_PREVIEW, 422: NAME_INVALID },
    },
    async handle({ params, principal }, services) {
      return { status: 200, body: await describePreview(requirePreview(previewRef(params, principal), services), services) };
    },
  },
  {
    method: 'DELETE',
    path: '/apps/:app/preview',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'deletePreview',
      summary:
        'End the preview: its URLs answer 404 at once, its containers stop once requests in flight are done, its log followers get `event: end` (reason `deleted`).',
      parameters: [APP],
      responses: {
        204: { description: 'Ended.' },
        400: BAD_QUERY,
        404: NO_PREVIEW,
        422: NAME_INVALID,
        503: error('`shutting_down`: svc is stopping and takes no deployment changes (`Retry-After: 5`).'),
      },
    },
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
    openapi: {
      operationId: 'getPreviewLogs',
      summary:
        'The log lines of one workload of the preview (build lines included), as for a deployment; with Accept: text/event-stream, followed as Server-Sent Events. Reading counts as using the preview, and a follower keeps it from idling.',
      parameters: [APP, WORKLOAD],
      responses: {
        200: {
          description:
            'The kept lines, oldest first (JSON); or, with `Accept: text/event-stream`, an event stream: `event: log` per line (data: a LogLine), `: ping` comments every 15 s, `event: end` when the preview ends (reason `deleted`: by DELETE or idle), when svc stops (`closing`), or when the client falls more than 1 MiB behind (`lagging`). Kept in memory only.',
          content: LOG_LINES,
        },
        400: BAD_QUERY,
        404: error('`not_found`: the workspace has no preview of this app, or the preview no such workload.'),
        422: NAME_INVALID,
      },
    },
    async handle({ params, principal, headers }, services) {
      const ref = previewRef(params, principal);
      const workload = params.workload!;
      const preview = requirePreview(ref, services);
      if (!preview.workloads.some((w) => w.name === workload)) {
        throw new SvcError('not_found', `the preview of ${ref.app} has no workload ${workload}.`, {
          hint: `GET /api/v1/apps/${ref.app}/preview lists its workloads.`,
        });
      }
      return logsAnswer(services, { ...ref, workload }, headers);
    },
  },
];

function previewRef(params: Readonly<Record<string, string>>, principal: Principal): DeploymentRef {
  return { workspace: principal.workspace, app: params.app!, stage: 'preview' };
}

function requirePreview(ref: DeploymentRef, services: ApiServices): Deployment {
  const preview = services.previews.get(ref);
  if (preview === null) {
    throw new SvcError(
      'not_found',
      `no preview of ${ref.app} in workspace ${ref.workspace}: it was never started, was ended, or ended after its idle timeout.`,
      {
        hint: `Start one with PUT /api/v1/apps/${ref.app}/preview (svc serve does).`,
      },
    );
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
