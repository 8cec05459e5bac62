/** The OpenAPI facts of the routes in app-deployments.ts, for docs/openapi.json (core/api/openapi.ts). */
import { answer, APP, BAD_QUERY, CODE_CHECKS, error, json, MANIFEST_INVALID, NAME_INVALID, NO_SUCH_DEPLOYMENT, ref, TOO_LARGE, UNAUTHORIZED, WORKLOAD } from './shared.js';
import type { Operation, Response } from './types.js';

const BAD_DEPLOY_BODY: Response = error('`bad_request` (an unknown or missing field, a wrong type, `bundle` not a sha256, `prune` with `workload`, a manifest of another app: the message names both) or `invalid_json`.');
const NO_BUNDLE_OR_WORKLOAD: Response = error('`not_found`: the workspace has not uploaded the bundle (upload it first), or the manifest has no such workload.');
const URL_TAKEN: Response = error('`conflict`: a URL of the app is taken by another deployment.');
/** What a deploy and its dry run both answer when the body or the workspace is not right. */
const DEPLOY_BODY_ERRORS = { 400: BAD_DEPLOY_BODY, 401: UNAUTHORIZED, 404: NO_BUNDLE_OR_WORKLOAD, 409: URL_TAKEN, 413: TOO_LARGE, 422: MANIFEST_INVALID } as const;

export const deployApp: Operation = {
  operationId: 'deployApp',
  summary: 'Deploy the app (or one workload) from a manifest and an uploaded bundle: a new version of each workload deployed, switched in once healthy. Answers when done; progress is not streamed.',
  parameters: [APP],
  requestBody: { required: true, content: json(ref('DeployInput')) },
  leftToHandler: CODE_CHECKS,
  responses: {
    201: answer('The app after the deploy.', ref('App')),
    ...DEPLOY_BODY_ERRORS,
    500: error('`image_build_failed`, `container_failed`: the new version could not start; the old one keeps serving.'),
  },
};

export const planDeploy: Operation = {
  operationId: 'planDeploy',
  summary: "A dry run of the deploy with the same body (svc deploy --dry-run): the checks of a deploy, then what it would do; on Nomad, each job from Nomad's plan endpoint. Changes nothing.",
  parameters: [APP],
  requestBody: { required: true, content: json(ref('DeployInput')) },
  leftToHandler: CODE_CHECKS,
  responses: {
    200: answer('The plan.', ref('DeployPlan')),
    ...DEPLOY_BODY_ERRORS,
    500: error('`nomad_rejected` (Nomad refused the job, its text kept) or `image_build_failed`.'),
    503: error('`scheduler_unreachable`: svc could not reach Nomad.'),
  },
};

export const stopDeployment: Operation = {
  operationId: 'stopDeployment',
  summary: 'Stop one deployment, definition kept: its URL answers 503 `deployment_stopped` until the workload is deployed again.',
  parameters: [APP, WORKLOAD],
  responses: { 200: answer('The app afterwards.', ref('App')), 400: BAD_QUERY, 401: UNAUTHORIZED, 404: NO_SUCH_DEPLOYMENT, 422: NAME_INVALID },
};

export const deleteDeployment: Operation = {
  operationId: 'deleteDeployment',
  summary: 'Delete one deployment (workload): its record, containers and URL (404 from now on).',
  parameters: [APP, WORKLOAD],
  responses: { 204: { description: 'Deleted.' }, 400: BAD_QUERY, 401: UNAUTHORIZED, 404: NO_SUCH_DEPLOYMENT, 422: NAME_INVALID },
};
