/**
 * Deployments of an app: deploy it (whole, or one workload) from a manifest
 * and an uploaded bundle, stop one deployment, delete one. The deploy
 * answers once the new version serves (no streamed progress yet).
 */
import { checkSecretValues } from '../secrets/rules.js';
import { INLINE_REF } from '../secrets/secrets.js';
import { SvcError } from '../errors.js';
import { parseManifest } from '../workload/resolve.js';
import type { AppSpec } from '../workload/types.js';
import { checkName } from '../workspaces/names.js';
import { appRef } from './apps.js';
import { describeApp } from './app-view.js';
import { notSha256, unknownBundle, workspaceBundles } from './bundles.js';
import type { DeployRequest } from '../deployments/manager.js';
import type { Principal } from '../plugin/types.js';
import * as doc from './openapi/app-deployments.js';
import type { ApiRoute, ApiServices } from './types.js';

export const appDeploymentRoutes: readonly ApiRoute[] = [
  {
    method: 'POST',
    path: '/apps/:app/deployments',
    auth: 'token',
    body: 'json',
    openapi: doc.deployApp,
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
    openapi: doc.planDeploy,
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
    openapi: doc.stopDeployment,
    async handle({ params, principal }, services) {
      const deployment = await services.deployments.stopWorkload(appRef(params, principal), checkName('workload', params['workload']));
      return { status: 200, body: await describeApp(deployment, services) };
    },
  },
  {
    method: 'DELETE',
    path: '/apps/:app/deployments/:workload',
    auth: 'token',
    body: 'none',
    openapi: doc.deleteDeployment,
    async handle({ params, principal }, services) {
      await services.deployments.deleteWorkload(appRef(params, principal), checkName('workload', params['workload']));
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
  body: Readonly<Record<string, unknown>>, workspace: string, services: ApiServices, pathApp?: string,
): Promise<{ spec: AppSpec; bundle: string; inlineSecrets?: Record<string, string>[] }> {
  const spec = appSpec(body['manifest'], pathApp);
  const bundle = body['bundle'] as string;
  if (!/^[0-9a-f]{64}$/.test(bundle)) throw notSha256(bundle, 'the field "bundle"');
  if (!(await workspaceBundles(services).has(workspace, bundle))) throw unknownBundle(bundle);
  const inlineSecrets = inlineSecretsOf(body['inlineSecrets'], spec);
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
    throw new SvcError('bad_request', `the manifest describes the app ${JSON.stringify(spec.name)}, but the path names ${JSON.stringify(app)}.`, {
      hint: `Send it to the paths of the app ${spec.name} (/api/v1/apps/${spec.name}/…), or rename the app in its code.`,
      details: { field: 'manifest', manifestApp: spec.name, pathApp: app },
    });
  }
  return spec;
}

/**
 * `inlineSecrets`: the app's `svc.Secret.from_dict` values, sent beside the manifest (never in
 * it), which its workloads name `@<i>`. Checked like a secret's values; messages name keys only.
 */
function inlineSecretsOf(value: unknown, spec: AppSpec): Record<string, string>[] | undefined {
  const refs = spec.workloads.flatMap((w) => (w.secrets ?? []).map((name) => INLINE_REF.exec(name)?.[1])).filter((i) => i !== undefined).map(Number);
  if (value === undefined || value === null) {
    if (refs.length > 0) throw new SvcError('bad_request', `the manifest's workloads name inline secrets (@${refs[0]}), but the field "inlineSecrets" is missing.`, { details: { field: 'inlineSecrets' } });
    return undefined;
  }
  if (!Array.isArray(value)) throw new SvcError('bad_request', 'the field "inlineSecrets" must be a list of KEY: value objects.', { details: { field: 'inlineSecrets' } });
  const beyond = refs.find((i) => i >= value.length);
  if (beyond !== undefined) throw new SvcError('bad_request', `a workload names the inline secret @${beyond}, but "inlineSecrets" holds ${value.length}.`, { details: { field: 'inlineSecrets' } });
  return value.map((values) => checkSecretValues(values, { allowEmpty: true }));
}

function optionalWorkload(value: unknown): string | undefined {
  return value === undefined || value === null ? undefined : checkName('workload', value);
}

/** The body of a deploy (and of its plan), checked: manifest, uploaded bundle, workload, prune. */
async function deployRequest(params: Readonly<Record<string, string>>, body: Record<string, unknown>, principal: Principal, services: ApiServices): Promise<DeployRequest> {
  const ref = appRef(params, principal);
  const { spec, bundle, inlineSecrets } = await deployableCode(body, ref.workspace, services, ref.app);
  services.checkSchedules?.(spec);
  const workload = optionalWorkload(body['workload']);
  const prune = body['prune'] === true;
  if (prune && workload !== undefined) {
    throw new SvcError('bad_request', `"prune" removes the workloads a whole-app deploy no longer has; it cannot go with "workload" (${workload}).`, { details: { field: 'prune' } });
  }
  return {
    spec, bundleSha256: bundle, workspace: ref.workspace, stage: 'deployed', principal,
    ...(workload === undefined ? {} : { workload }), ...(prune ? { prune } : {}), ...(inlineSecrets === undefined ? {} : { inlineSecrets }),
  };
}
