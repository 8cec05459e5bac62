/** The OpenAPI facts of the routes in members.ts and workspaces.ts, for docs/openapi.json (core/api/openapi.ts). */
import { answer, BAD_JSON_BODY, error, json, listOf, ref, TOO_LARGE, UNAUTHORIZED } from './shared.js';
import type { Operation, Parameter } from './types.js';

const ACCOUNT_ID: Parameter = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^acc_[0-9a-f]{16}$' } };
const WORKSPACE_NAME: Parameter = { name: 'name', in: 'path', required: true, schema: { type: 'string' }, description: "The workspace's name (a lowercase DNS label)." };
const NOT_AN_ACCOUNT = error('`forbidden`: the token acts as no account of this workspace, or (inviting, removing) as a member rather than an owner.');

export const listWorkspaces: Operation = {
  operationId: 'listWorkspaces',
  summary: "The workspaces the caller's account may use, with its role in each.",
  responses: {
    200: answer('Its workspaces, and which one the token acts in.', ref('WorkspaceList')),
    401: UNAUTHORIZED,
    403: NOT_AN_ACCOUNT,
  },
};

export const createWorkspace: Operation = {
  operationId: 'createWorkspace',
  summary: "Create a workspace owned by the caller's account.",
  requestBody: { required: true, content: json({ type: 'object', required: ['name'], additionalProperties: false, properties: { name: { type: 'string', description: 'A lowercase DNS label, not a reserved one.' } } }) },
  leftToHandler: { name: ['required', 'type'] },
  responses: {
    201: answer('The new workspace.', ref('Workspace')),
    400: BAD_JSON_BODY,
    401: UNAUTHORIZED,
    403: NOT_AN_ACCOUNT,
    409: error('`conflict`: a workspace of that name exists.'),
    413: TOO_LARGE,
    422: error('`name_invalid`: the name is not a lowercase DNS label, or reserved.'),
  },
};

export const workspaceToken: Operation = {
  operationId: 'createWorkspaceToken',
  summary: "A token of the caller's account in another of its workspaces (`svc workspace use`). The secret is in this answer only.",
  pathParameters: [WORKSPACE_NAME],
  requestBody: { required: false, content: json({ type: 'object', additionalProperties: false, properties: {} }) },
  responses: {
    201: answer('The token with its secret.', ref('CreatedToken')),
    400: BAD_JSON_BODY,
    401: UNAUTHORIZED,
    403: NOT_AN_ACCOUNT,
    404: error("`not_found`: the caller's account has no such workspace (another's is not found either)."),
    413: TOO_LARGE,
  },
};

export const listMembers: Operation = {
  operationId: 'listMembers',
  summary: "Everyone who may use the caller's workspace, with their roles, invited ones too.",
  responses: {
    200: answer('The members, by name.', listOf('members', ref('Member'))),
    401: UNAUTHORIZED,
    403: NOT_AN_ACCOUNT,
  },
};

export const inviteMember: Operation = {
  operationId: 'inviteMember',
  summary: "Invite a person into the caller's workspace (owners): a new account and its one-time sign-in link, valid 7 days, in this answer only.",
  requestBody: {
    required: true,
    content: json({ type: 'object', required: ['name'], additionalProperties: false, properties: { name: { type: 'string', minLength: 1, maxLength: 100 }, role: { enum: ['owner', 'member'], default: 'member' } } }),
  },
  leftToHandler: { name: ['required', 'type', 'minLength', 'maxLength'], role: ['enum'] },
  responses: {
    201: answer('The invited member and the link (its path: append it to the server\'s URL).', ref('Invitation')),
    400: BAD_JSON_BODY,
    401: UNAUTHORIZED,
    403: NOT_AN_ACCOUNT,
    413: TOO_LARGE,
  },
};

export const removeMember: Operation = {
  operationId: 'removeMember',
  summary: "Remove a member from the caller's workspace (owners): their sessions there end and their tokens there are revoked.",
  pathParameters: [ACCOUNT_ID],
  responses: {
    204: { description: 'Removed.' },
    401: UNAUTHORIZED,
    403: NOT_AN_ACCOUNT,
    404: error('`not_found`: the workspace has no such member (another workspace\'s are not found either).'),
    409: error('`conflict`: the last owner of the workspace cannot be removed.'),
  },
};
