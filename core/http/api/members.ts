/**
 * Workspaces a person may use, and the people of the caller's workspace:
 * what `svc workspace` and `svc member` call, and the dashboard does through
 * the same service (core/services/members/members.ts). Every route sees only the
 * caller's account and workspace.
 */
import { WORKSPACE_NAME_PATTERN } from '../../model/names.js';
import { noSuchMember } from '../../services/members/members.js';
import { answer, BAD_JSON_BODY, error, json, listOf, nameRefusal, ref } from './openapi/shared.js';
import type { Parameter } from './openapi/types.js';
import { NO_STORE, type ApiRoute } from './types.js';

const ACCOUNT_ID: Parameter = {
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^acc_[0-9a-f]{16}$' },
  // An id that no account can have is a member the workspace does not have.
  refusal: { code: 'not_found', refuse: (id, { workspace }) => noSuchMember(workspace!, id) },
};
export const WORKSPACE_NAME: Parameter = {
  name: 'name',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: WORKSPACE_NAME_PATTERN },
  description: "The workspace's name (a lowercase DNS label, not a reserved one).",
  refusal: nameRefusal('workspace'),
};
const NOT_AN_ACCOUNT = error(
  '`forbidden`: the token acts as no account of this workspace, or (inviting, removing) as a member rather than an owner.',
);

export const memberRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/workspaces',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'listWorkspaces',
      summary: "The workspaces the caller's account may use, with its role in each.",
      responses: {
        200: answer('Its workspaces, and which one the token acts in.', ref('WorkspaceList')),
        403: NOT_AN_ACCOUNT,
      },
    },
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
    openapi: {
      operationId: 'createWorkspace',
      summary: "Create a workspace owned by the caller's account.",
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          required: ['name'],
          additionalProperties: false,
          properties: { name: { type: 'string', description: 'A lowercase DNS label, not a reserved one.' } },
        }),
      },
      leftToHandler: { name: ['required', 'type'] },
      responses: {
        201: answer('The new workspace.', ref('Workspace')),
        400: BAD_JSON_BODY,
        403: NOT_AN_ACCOUNT,
        409: error('`conflict`: a workspace of that name exists.'),
        422: error('`name_invalid`: the name is not a lowercase DNS label, or reserved.'),
      },
    },
    async handle({ body, principal }, { controlPlane }) {
      return { status: 201, body: await controlPlane.members.createWorkspace(body.name, principal) };
    },
  },
  {
    method: 'POST',
    path: '/workspaces/:name/token',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'createWorkspaceToken',
      summary: "A token of the caller's account in another of its workspaces (`svc workspace use`). The secret is in this answer only.",
      pathParameters: [WORKSPACE_NAME],
      requestBody: { required: false, content: json({ type: 'object', additionalProperties: false, properties: {} }) },
      responses: {
        201: answer('The token with its secret.', ref('CreatedToken')),
        400: BAD_JSON_BODY,
        403: NOT_AN_ACCOUNT,
        404: error("`not_found`: the caller's account has no such workspace (another's is not found either)."),
        422: error('`name_invalid`: the name is not a lowercase DNS label, or reserved.'),
      },
    },
    async handle({ params, principal }, { controlPlane }) {
      const { secret, token } = await controlPlane.members.tokenIn(params.name, principal);
      return { status: 201, body: { ...token, secret }, headers: NO_STORE };
    },
  },
  {
    method: 'GET',
    path: '/members',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'listMembers',
      summary: "Everyone who may use the caller's workspace, with their roles, invited ones too.",
      responses: {
        200: answer('The members, by name.', listOf('members', ref('Member'))),
        403: NOT_AN_ACCOUNT,
      },
    },
    async handle({ principal }, { controlPlane }) {
      return { status: 200, body: { members: await controlPlane.members.list(principal) } };
    },
  },
  {
    method: 'POST',
    path: '/members',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'inviteMember',
      summary:
        "Invite a person into the caller's workspace (owners): a new account and its one-time sign-in link, valid 7 days, in this answer only.",
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          required: ['name'],
          additionalProperties: false,
          properties: { name: { type: 'string', minLength: 1, maxLength: 100 }, role: { enum: ['owner', 'member'], default: 'member' } },
        }),
      },
      leftToHandler: { name: ['required', 'type', 'minLength', 'maxLength'], role: ['enum'] },
      responses: {
        201: answer("The invited member and the link (its path: append it to the server's URL).", ref('Invitation')),
        400: BAD_JSON_BODY,
        403: NOT_AN_ACCOUNT,
      },
    },
    async handle({ body, principal }, { controlPlane }) {
      const { member, signIn } = await controlPlane.members.invite({ name: body.name, role: body.role }, principal);
      return { status: 201, body: { member, path: `/login#${signIn.secret}`, expiresAt: signIn.expiresAt }, headers: NO_STORE };
    },
  },
  {
    method: 'DELETE',
    path: '/members/:id',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'removeMember',
      summary: "Remove a member from the caller's workspace (owners): their sessions there end and their tokens there are revoked.",
      pathParameters: [ACCOUNT_ID],
      responses: {
        204: { description: 'Removed.' },
        403: NOT_AN_ACCOUNT,
        404: error("`not_found`: the workspace has no such member (another workspace's are not found either)."),
        409: error('`conflict`: the last owner of the workspace cannot be removed.'),
      },
    },
    async handle({ params, principal }, { controlPlane }) {
      await controlPlane.members.remove(params.id, principal);
      return { status: 204 };
    },
  },
];
