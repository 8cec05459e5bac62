/**
 * Workspaces a person may use, and the people of the caller's workspace:
 * what `svc workspace` and `svc member` call, and the dashboard does through
 * the same service (core/workspaces/members.ts). Every route sees only the
 * caller's account and workspace.
 */
import { roleIn } from '../accounts/types.js';
import { SvcError } from '../errors.js';
import { checkName } from '../workspaces/names.js';
import { onlyFields } from './input.js';
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
      await controlPlane.members.list(principal); // forbidden for a token of no account here
      const workspaces = (await controlPlane.members.workspacesOf(principal.subject)).map(({ workspace, role }) => ({ ...workspace, role }));
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
      onlyFields(body, ['name']);
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
      onlyFields(body, []);
      const name = checkName('workspace', params['name']);
      const account = await controlPlane.accounts.get(principal.subject);
      if (account === null || !account.workspaces.includes(principal.workspace)) throw new SvcError('forbidden', `${principal.subject} is no account of workspace ${principal.workspace}.`);
      if (!account.workspaces.includes(name)) throw new SvcError('not_found', `you have no workspace ${name}.`, { hint: 'GET /api/v1/workspaces lists yours.' });
      const { secret, token } = await controlPlane.tokens.create({ name: `svc workspace use (${roleIn(account, name)})` }, { workspace: name, subject: account.id });
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
      onlyFields(body, ['name', 'role']);
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
