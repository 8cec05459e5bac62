/**
 * Workspaces a person may use, and the people of the caller's workspace:
 * what `svc workspace` and `svc member` call, and the dashboard does through
 * the same service (core/workspaces/members.ts). Every route sees only the
 * caller's account and workspace.
 */
import * as doc from './openapi/members.js';
import { NO_STORE, type ApiRoute } from './types.js';

export const memberRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/workspaces',
    auth: 'token',
    body: 'none',
    openapi: doc.listWorkspaces,
    async handle({ principal }, { controlPlane }) {
      const workspaces = (await controlPlane.members.workspacesOf(principal)).map(({ workspace, role }) => ({ ...workspace, role }));
      return { status: 200, body: { current: principal.workspace, workspaces } };
    },
  },
  {
    method: 'POST',
    path: '/workspaces',
    auth: 'token',
    body: 'json',
    openapi: doc.createWorkspace,
    async handle({ body, principal }, { controlPlane }) {
      return { status: 201, body: await controlPlane.members.createWorkspace(body['name'], principal) };
    },
  },
  {
    method: 'POST',
    path: '/workspaces/:name/token',
    auth: 'token',
    body: 'json',
    openapi: doc.workspaceToken,
    async handle({ body, params, principal }, { controlPlane }) {
      const { secret, token } = await controlPlane.members.tokenIn(params['name'], principal);
      return { status: 201, body: { ...token, secret }, headers: NO_STORE };
    },
  },
  {
    method: 'GET',
    path: '/members',
    auth: 'token',
    body: 'none',
    openapi: doc.listMembers,
    async handle({ principal }, { controlPlane }) {
      return { status: 200, body: { members: await controlPlane.members.list(principal) } };
    },
  },
  {
    method: 'POST',
    path: '/members',
    auth: 'token',
    body: 'json',
    openapi: doc.inviteMember,
    async handle({ body, principal }, { controlPlane }) {
      const { member, signIn } = await controlPlane.members.invite({ name: body['name'], role: body['role'] }, principal);
      return { status: 201, body: { member, path: `/login#${signIn.secret}`, expiresAt: signIn.expiresAt }, headers: NO_STORE };
    },
  },
  {
    method: 'DELETE',
    path: '/members/:id',
    auth: 'token',
    body: 'none',
    openapi: doc.removeMember,
    async handle({ params, principal }, { controlPlane }) {
      await controlPlane.members.remove(params['id'], principal);
      return { status: 204 };
    },
  },
];
