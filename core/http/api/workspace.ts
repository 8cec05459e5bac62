/**
 * Workspaces' plans. A principal reads its own workspace and the record of
 * its plan's changes; only the server's operator changes a plan (any
 * workspace's), and every change is recorded and announced to plugins
 * (`workspace.plan_changed`: svc:custom-domains suspends or restores domains).
 */
import type { PluginHost } from '../../infra/plugin/host.js';
import type { Principal } from '../../infra/plugin/types.js';
import type { PlanChange } from '../../services/workspaces/plan-changes.js';
import type { Workspace } from '../../services/workspaces/types.js';
import { answer, BAD_JSON_BODY, error, holding, json, ref } from './openapi/shared.js';
import type { Operation } from './openapi/types.js';
import type { ApiRoute, ApiServices } from './types.js';

/** A plan change: the body and the answers of both routes that make one. */
const planChange = {
  requestBody: { required: true, content: json(holding('plan', ref('Plan'))) },
  leftToHandler: { plan: ['type', 'enum'] },
  responses: {
    200: answer('The updated workspace.', ref('Workspace')),
    400: BAD_JSON_BODY,
    403: error("`not_operator`: the caller is not the server's operator."),
  },
} satisfies Partial<Operation>;

export const workspaceRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/workspace',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getWorkspace',
      summary: "The caller's workspace.",
      responses: { 200: answer('The workspace.', ref('Workspace')) },
    },
    async handle({ principal }, { controlPlane }) {
      return { status: 200, body: await controlPlane.workspaces.require(principal.workspace) };
    },
  },
  {
    method: 'PATCH',
    path: '/workspace',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'setPlan',
      summary: "Change the caller's workspace's plan (the server's operator only; recorded with who and when).",
      ...planChange,
    },
    async handle({ body, principal }, services) {
      return { status: 200, body: await changePlan(services, principal, principal.workspace, body) };
    },
  },
  {
    method: 'GET',
    path: '/workspace/plan',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getPlan',
      summary: "The caller's workspace's plan, every change of it (who and when), and whether the caller is the server's operator.",
      responses: { 200: answer('The plan and its changes, oldest first.', ref('PlanRecord')) },
    },
    async handle({ principal }, { controlPlane }) {
      const { workspaces, accounts } = controlPlane;
      const workspace = await workspaces.require(principal.workspace);
      return {
        status: 200,
        body: {
          workspace: workspace.name,
          plan: workspace.plan,
          changes: await workspaces.planChanges(workspace.name),
          operator: await accounts.isOperator(principal.subject),
        },
      };
    },
  },
  {
    method: 'PUT',
    path: '/workspaces/:name/plan',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'putPlan',
      summary: "Change any workspace's plan (the server's operator only; recorded with who and when).",
      parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' }, description: "The workspace's name." }],
      requestBody: planChange.requestBody,
      leftToHandler: planChange.leftToHandler,
      responses: { ...planChange.responses, 404: error('`not_found`: there is no such workspace.') },
    },
    async handle({ body, principal, params }, services) {
      return { status: 200, body: await changePlan(services, principal, params.name!, body) };
    },
  },
];

/** The operator's change of `name`'s plan, recorded, then told to plugins. */
async function changePlan(
  services: Pick<ApiServices, 'controlPlane' | 'plugins'>,
  principal: Principal,
  name: string,
  body: Readonly<Record<string, unknown>>,
): Promise<Workspace> {
  const plan = body.plan;
  const { workspaces, accounts } = services.controlPlane;
  const operator = await accounts.isOperator(principal.subject);
  const { workspace, change } = await workspaces.setPlan(name, plan, { subject: principal.subject, operator });
  if (change !== null) await announce(services.plugins, change);
  return workspace;
}

function announce(plugins: PluginHost, change: PlanChange): Promise<unknown> {
  return plugins.parallel('onEvent', {
    type: 'workspace.plan_changed',
    workspace: change.workspace,
    plan: change.to,
    previous: change.from,
    by: change.by,
    at: change.at,
  });
}
