/**
 * Deployments of an app: deploy it (whole, or one workload) from a manifest
 * and an uploaded bundle, stop one deployment, delete one. The deploy
 * answers once the new version serves (no streamed progress yet).
 */
import { checkSecretValues } from '../../services/secrets/rules.js';
import { INLINE_REF } from '../../services/secrets/secrets.js';
import { SvcError } from '../../model/errors.js';
import { parseManifest } from '../../model/workload/resolve.js';
import type { AppSpec } from '../../model/workload/types.js';
import { checkName } from '../../model/names.js';
import { appRef } from './apps.js';
import { describeApp } from './app-view.js';
import { notSha256, unknownBundle, workspaceBundles } from './bundles.js';
import type { DeployRequest } from '../../services/deployments/manager.js';
import type { Principal } from '../../infra/plugin/types.js';
import {
  answer,
  APP,
  BAD_QUERY,
  CODE_CHECKS,
  error,
  json,
  MANIFEST_INVALID,
  NAME_INVALID,
  NO_SUCH_DEPLOYMENT,
  ref,
  WORKLOAD,
} from './openapi/shared.js';
import type { Response } from './openapi/types.js';
import type { ApiRoute, ApiServices } from './types.js';

const BAD_DEPLOY_BODY: Response = error(
  '`bad_request` (an unknown or missing field, a wrong type, `bundle` not a sha256, `prune` with `workload`, a manifest of another app: the message names both) or `invalid_json`.',
);
const NO_BUNDLE_OR_WORKLOAD: Response = error(
  '`not_found`: the workspace has not uploaded the bundle (upload it first), or the manifest has no such workload.',
);
const URL_TAKEN: Response = error('`conflict`: a URL of the app is taken by another deployment.');

/** What a deploy and its dry run both answer when the body or the workspace is not right. */
const DEPLOY_BODY_ERRORS = { 400: BAD_DEPLOY_BODY, 404: NO_BUNDLE_OR_WORKLOAD, 409: URL_TAKEN, 422: MANIFEST_INVALID } as const;

export const appDeploymentRoutes: readonly ApiRoute[] = [
  {
    method: 'POST',
    path: '/apps/:app/deployments',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'deployApp',
      summary:
        'Deploy the app (or one workload) from a manifest and an uploaded bundle: a new version of each workload deployed, switched in once healthy. Answers when done; progress is not streamed.',
      parameters: [APP],
      requestBody: { required: true, content: json(ref('DeployInput')) },
      leftToHandler: CODE_CHECKS,
      responses: {
        201: answer('The app after the deploy.', ref('App')),
        ...DEPLOY_BODY_ERRORS,
        500: error('`image_build_failed`, `container_failed`: the new version could not start; the old one keeps serving.'),
      },
    },
    async handle({ params, body, principal }, services) {
      const request = await deployRequest(params, body, principal, services);
      const deployment = await services.deployments.deploy(request);
      return { status: 201, body: await describeApp(deployment, services) };
    },
  },
  {
    // Declared before `/apps/:app/deployments/:workload/stop`'s siblings: `plan` is a workload name too, but not with this method and depth.
    method: 'POST',
    path: '/apps/:app/deployments/plan',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'planDeploy',
      summary:
        "A dry run of the deploy with the same body (svc deploy --dry-run): the checks of a deploy, then what it would do; on Nomad, each job from Nomad's plan endpoint. Changes nothing.",
      parameters: [APP],
      requestBody: { required: true, content: json(ref('DeployInput')) },
      leftToHandler: CODE_CHECKS,
      responses: {
        200: answer('The plan.', ref('DeployPlan')),
        ...DEPLOY_BODY_ERRORS,
        500: error('`nomad_rejected` (Nomad refused the job, its text kept) or `image_build_failed`.'),
        503: error('`scheduler_unreachable`: svc could not reach Nomad.'),
      },
    },
    async handle({ params, body, principal }, services) {
      const request = await deployRequest(params, body, principal, services);
      return { status: 200, body: await services.deployments.plan(request) };
    },
  },
  {
    method: 'POST',
    path: '/apps/:app/deployments/:workload/stop',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'stopDeployment',
      summary: 'Stop one deployment, definition kept: its URL answers 503 `deployment_stopped` until the workload is deployed again.',
      parameters: [APP, WORKLOAD],
      responses: { 200: answer('The app afterwards.', ref('App')), 400: BAD_QUERY, 404: NO_SUCH_DEPLOYMENT, 422: NAME_INVALID },
    },
    async handle({ params, principal }, services) {
      const deployment = await services.deployments.stopWorkload(appRef(params, principal), params.workload!);
      return { status: 200, body: await describeApp(deployment, services) };
    },
  },
  {
    method: 'POST',
    path: '/apps/:app/deployments/:workload/scale',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'scaleDeployment',
      summary:
        "Set a running deployment's scaling bounds at once, without a deploy: `min` and `max` containers and `buffer` idle ones; each left out keeps its value. They hold until its next deploy.",
      parameters: [APP, WORKLOAD],
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          additionalProperties: false,
          properties: {
            min: { type: 'integer', minimum: 0, maximum: 1000, description: 'Containers kept at least (min_containers).' },
            max: { type: 'integer', minimum: 1, maximum: 1000, description: 'Containers at most (max_containers).' },
            buffer: {
              type: 'integer',
              minimum: 0,
              maximum: 1000,
              description: 'Idle containers kept beyond the load (buffer_containers).',
            },
          },
        }),
      },
      responses: {
        200: answer('The app afterwards.', ref('App')),
        400: error(
          '`bad_request`: a bound out of range, `min` above `max`, or a function (its containers start with its calls); nothing changed.',
        ),
        404: NO_SUCH_DEPLOYMENT,
        422: NAME_INVALID,
      },
    },
    async handle({ params, principal, body }, services) {
      const change = body as { min?: number; max?: number; buffer?: number };
      const deployment = await services.deployments.scaleWorkload(appRef(params, principal), params.workload!, change);
      return { status: 200, body: await describeApp(deployment, services) };
    },
  },
  {
    method: 'DELETE',
    path: '/apps/:app/deployments/:workload',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'deleteDeployment',
      summary: 'Delete one deployment (workload): its record, containers and URL (404 from now on).',
      parameters: [APP, WORKLOAD],
      responses: { 204: { description: 'Deleted.' }, 400: BAD_QUERY, 404: NO_SUCH_DEPLOYMENT, 422: NAME_INVALID },
    },
    async handle({ params, principal }, services) {
      await services.deployments.deleteWorkload(appRef(params, principal), params.workload!);
      return { status: 204 };
    },
  },
];

/**
 * The fields `manifest` and `bundle` of a deploy (or a run, or a preview):
 * the app, validated and resolved, and the sha256 of a bundle the workspace
 * uploaded. With `pathApp`, the manifest must describe that app.
 */
export async function deployableCode(
  body: Readonly<Record<string, unknown>>,
  workspace: string,
  services: ApiServices,
  pathApp?: string,
): Promise<{ spec: AppSpec; bundle: string; inlineSecrets?: Record<string, string>[] }> {
  const spec = appSpec(body.manifest, pathApp);
  const bundle = body.bundle as string;
  if (!/^[0-9a-f]{64}$/.test(bundle)) throw notSha256(bundle, 'the field "bundle"');
  if (!(await workspaceBundles(services).has(workspace, bundle))) throw unknownBundle(bundle);
  const inlineSecrets = inlineSecretsOf(body.inlineSecrets, spec);
  return { spec, bundle, ...(inlineSecrets === undefined ? {} : { inlineSecrets }) };
}

/**
 * The manifest, validated (`manifest_invalid` listing every issue, names
 * included: the manifest holds app and workload names to the one name rule)
 * and resolved. Its app must be the one in the path.
 */
function appSpec(manifest: unknown, app: string | undefined): AppSpec {
  const spec = parseManifest(manifest);
  if (app !== undefined && spec.name !== app) {
    throw new SvcError(
      'bad_request',
      `the manifest describes the app ${JSON.stringify(spec.name)}, but the path names ${JSON.stringify(app)}.`,
      {
        hint: `Send it to the paths of the app ${spec.name} (/api/v1/apps/${spec.name}/…), or rename the app in its code.`,
        details: { field: 'manifest', manifestApp: spec.name, pathApp: app },
      },
    );
  }
  return spec;
}

/**
 * `inlineSecrets`: the app's `svc.Secret.from_dict` values, sent beside the manifest (never in
 * it), which its workloads name `@<i>`. Checked like a secret's values; messages name keys only.
 */
function inlineSecretsOf(value: unknown, spec: AppSpec): Record<string, string>[] | undefined {
  const refs = spec.workloads
    .flatMap((w) => (w.secrets ?? []).map((name) => INLINE_REF.exec(name)?.[1]))
    .filter((i) => i !== undefined)
    .map(Number);
  if (value === undefined || value === null) {
    if (refs.length > 0)
      throw new SvcError(
        'bad_request',
        `the manifest's workloads name inline secrets (@${refs[0]}), but the field "inlineSecrets" is missing.`,
        { details: { field: 'inlineSecrets' } },
      );
    return undefined;
  }
  if (!Array.isArray(value))
    throw new SvcError('bad_request', 'the field "inlineSecrets" must be a list of KEY: value objects.', {
      details: { field: 'inlineSecrets' },
    });
  const beyond = refs.find((i) => i >= value.length);
  if (beyond !== undefined)
    throw new SvcError('bad_request', `a workload names the inline secret @${beyond}, but "inlineSecrets" holds ${value.length}.`, {
      details: { field: 'inlineSecrets' },
    });
  return value.map((values) => checkSecretValues(values, { allowEmpty: true }));
}

function optionalWorkload(value: unknown): string | undefined {
  return value === undefined || value === null ? undefined : checkName('workload', value);
}

/** The body of a deploy (and of its plan), checked: manifest, uploaded bundle, workload, prune. */
async function deployRequest(
  params: Readonly<Record<string, string>>,
  body: Record<string, unknown>,
  principal: Principal,
  services: ApiServices,
): Promise<DeployRequest> {
  const ref = appRef(params, principal);
  const { spec, bundle, inlineSecrets } = await deployableCode(body, ref.workspace, services, ref.app);
  services.checkSchedules?.(spec);
  const workload = optionalWorkload(body.workload);
  const prune = body.prune === true;
  if (prune && workload !== undefined) {
    throw new SvcError(
      'bad_request',
      `"prune" removes the workloads a whole-app deploy no longer has; it cannot go with "workload" (${workload}).`,
      { details: { field: 'prune' } },
    );
  }
  return {
    spec,
    bundleSha256: bundle,
    workspace: ref.workspace,
    stage: 'deployed',
    principal,
    ...(workload === undefined ? {} : { workload }),
    ...(prune ? { prune } : {}),
    ...(inlineSecrets === undefined ? {} : { inlineSecrets }),
  };
}
