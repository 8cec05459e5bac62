/** The OpenAPI facts of the routes in previews.ts, for docs/openapi.json (core/api/openapi.ts). */
import { answer, APP, BAD_QUERY, CODE_CHECKS, error, json, LOG_LINES, MANIFEST_INVALID, NAME_INVALID, ref, SHUTTING_DOWN, TOO_LARGE, UNAUTHORIZED, WORKLOAD } from './shared.js';
import type { Operation, Response } from './types.js';

const NO_PREVIEW: Response = error("`not_found`: the workspace has no preview of this app: never put, ended, or ended after its idle timeout (another workspace's is not found either).");

export const putPreview: Operation = {
  operationId: 'putPreview',
  summary: 'Put the preview of the app (stage `preview`, at its `<app>--preview` URLs): its first version or the next one (live reload), switched in once healthy; workloads the new code no longer has leave it. Ends by itself once idle for its timeout; never durable.',
  parameters: [APP],
  requestBody: { required: true, content: json(ref('PreviewInput')) },
  leftToHandler: CODE_CHECKS,
  responses: {
    200: answer('The preview once it serves (also the first time).', ref('Preview')),
    400: error('`bad_request` (an unknown or missing field, a wrong type, `bundle` not a sha256, `idleTimeoutSeconds` not a whole number from 1 to 86400, a manifest of another app: the message names both) or `invalid_json`.'),
    401: UNAUTHORIZED,
    404: error('`not_found`: the workspace has not uploaded the bundle (upload it first).'),
    409: error('`conflict`: a URL of the preview is taken by another deployment.'),
    413: TOO_LARGE,
    422: MANIFEST_INVALID,
    500: error('`image_build_failed`, `container_failed`: the new version could not start; a preview that was running keeps serving its version.'),
    503: SHUTTING_DOWN,
  },
};

export const getPreview: Operation = {
  operationId: 'getPreview',
  summary: 'The preview of the app, with its idle timeout and when it ends if unused; asking counts as using it.',
  parameters: [APP],
  responses: { 200: answer('The preview.', ref('Preview')), 400: BAD_QUERY, 401: UNAUTHORIZED, 404: NO_PREVIEW, 422: NAME_INVALID },
};

export const deletePreview: Operation = {
  operationId: 'deletePreview',
  summary: 'End the preview: its URLs answer 404 at once, its containers stop once requests in flight are done, its log followers get `event: end` (reason `deleted`).',
  parameters: [APP],
  responses: {
    204: { description: 'Ended.' },
    400: BAD_QUERY,
    401: UNAUTHORIZED,
    404: NO_PREVIEW,
    422: NAME_INVALID,
    503: error('`shutting_down`: svc is stopping and takes no deployment changes (`Retry-After: 5`).'),
  },
};

export const getPreviewLogs: Operation = {
  operationId: 'getPreviewLogs',
  summary: 'The log lines of one workload of the preview (build lines included), as for a deployment; with Accept: text/event-stream, followed as Server-Sent Events. Reading counts as using the preview, and a follower keeps it from idling.',
  parameters: [APP, WORKLOAD],
  responses: {
    200: {
      description: 'The kept lines, oldest first (JSON); or, with `Accept: text/event-stream`, an event stream: `event: log` per line (data: a LogLine), `: ping` comments every 15 s, `event: end` when the preview ends (reason `deleted`: by DELETE or idle), when svc stops (`closing`), or when the client falls more than 1 MiB behind (`lagging`). Kept in memory only.',
      content: LOG_LINES,
    },
    400: BAD_QUERY,
    401: UNAUTHORIZED,
    404: error('`not_found`: the workspace has no preview of this app, or the preview no such workload.'),
    422: NAME_INVALID,
  },
};
