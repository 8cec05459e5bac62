/**
 * Per-workspace quotas (core/services/workspaces/quota-book.ts): a workspace reads its own and what it
 * uses against it; the server's operator sets any workspace's (`svc workspace quota <name> --containers
 * …`) or removes it, after which the config's (`workspaceQuotas`) holds again.
 */
import { SvcError } from '../../model/errors.js';
import { QUOTA_KEYS } from '../../model/quotas.js';
import { answer, BAD_JSON_BODY, error, json, NAME_INVALID, ref } from './openapi/shared.js';
import { WORKSPACE_NAME } from './members.js';
import type { ApiRoute, ApiServices } from './types.js';

// The same name rule as every route of /workspaces/:name: a name no workspace can have is name_invalid (422).
const WORKSPACE = WORKSPACE_NAME;

const NOT_OPERATOR = error("`not_operator`: the caller is not the server's operator.");

/** The workspace's quota, where it comes from, and what its containers take now. */
async function quotaView(services: Pick<ApiServices, 'quotas' | 'autoscaler' | 'controlPlane'>, workspace: string) {
  await services.controlPlane.workspaces.require(workspace);
  return {
    workspace,
    quota: services.quotas.quotaOf(workspace),
    source: services.quotas.sourceOf(workspace),
    inUse: services.autoscaler.quotaUse(workspace),
  };
}

async function setQuota(services: ApiServices, subject: string, workspace: string, quota: unknown) {
  // The operator first: anyone else learns nothing of which workspaces exist.
  const operator = await services.controlPlane.accounts.isOperator(subject);
  if (operator) await services.controlPlane.workspaces.require(workspace);
  await services.quotas.set(workspace, quota, { subject, operator });
  return quotaView(services, workspace);
}

export const quotaRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/workspace/quota',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getQuota',
      summary: "The caller's workspace's quota (set by the operator's command, from the config, or none) and what its containers take now.",
      responses: { 200: answer('The quota and its use.', ref('QuotaView')) },
    },
    async handle({ principal }, services) {
      return { status: 200, body: await quotaView(services, principal.workspace) };
    },
  },
  {
    method: 'PUT',
    path: '/workspaces/:name/quota',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'putQuota',
      summary:
        "Set a workspace's quota (the server's operator only): containers, CPU cores, memory; it holds at once for its next scale-ups and deploys.",
      pathParameters: [WORKSPACE],
      requestBody: { required: true, content: json(ref('Quota')) },
      responses: {
        200: answer('The quota and its use.', ref('QuotaView')),
        400: BAD_JSON_BODY,
        403: NOT_OPERATOR,
        404: error('`not_found`: there is no such workspace.'),
        422: NAME_INVALID,
      },
    },
    async handle({ body, principal, params }, services) {
      if (Object.keys(body).length === 0) {
        throw new SvcError('bad_request', `give at least one of ${QUOTA_KEYS.join(', ')}; to remove the quota, DELETE it.`);
      }
      return { status: 200, body: await setQuota(services, principal.subject, params.name!, body) };
    },
  },
  {
    method: 'DELETE',
    path: '/workspaces/:name/quota',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'deleteQuota',
      summary: "Remove a workspace's quota set by command (the server's operator only): the config's holds again, if any.",
      pathParameters: [WORKSPACE],
      responses: {
        200: answer('The quota now and its use.', ref('QuotaView')),
        403: NOT_OPERATOR,
        404: error('`not_found`: there is no such workspace.'),
        422: NAME_INVALID,
      },
    },
    async handle({ principal, params }, services) {
      return { status: 200, body: await setQuota(services, principal.subject, params.name!, null) };
    },
  },
];
