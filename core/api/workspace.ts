/**
 * The caller's workspace: read it, and change its plan (owners only). There
 * is no way to name another workspace here: a principal only sees its own.
 */
import { onlyFields, required } from './input.js';
import * as doc from './openapi/workspace.js';
import { roleOf } from './role.js';
import type { ApiRoute } from './types.js';

export const workspaceRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/workspace',
    auth: 'token',
    body: 'none',
    openapi: doc.getWorkspace,
    async handle({ principal }, { controlPlane }) {
      return { status: 200, body: await controlPlane.workspaces.require(principal.workspace) };
    },
  },
  {
    method: 'PATCH',
    path: '/workspace',
    auth: 'token',
    body: 'json',
    openapi: doc.setPlan,
    async handle({ body, principal }, { controlPlane }) {
      onlyFields(body, ['plan']);
      const plan = required(body, 'plan');
      const role = await roleOf(principal, controlPlane.accounts);
      return { status: 200, body: await controlPlane.workspaces.setPlan(principal.workspace, plan, { principal, role }) };
    },
  },
];
