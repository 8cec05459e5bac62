/** The OpenAPI facts of the routes in tokens.ts, for docs/openapi.json (core/api/openapi.ts). */
import { answer, BAD_JSON_BODY, error, json, listOf, ref, TOO_LARGE, UNAUTHORIZED } from './shared.js';
import type { Operation, Parameter } from './types.js';

const TOKEN_ID: Parameter = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^tok_[0-9a-f]{12}$' } };

export const createToken: Operation = {
  operationId: 'createToken',
  summary: "Create an access token of the caller's workspace, acting as the caller. The secret is in this answer only.",
  requestBody: { required: false, content: json(ref('TokenInput')) },
  leftToHandler: { name: ['type', 'minLength', 'maxLength'], expiresAt: ['type', 'format'] },
  responses: {
    201: {
      description: 'The token with its secret.',
      content: json(ref('CreatedToken')),
      headers: { Location: { schema: { type: 'string' }, description: '/api/v1/tokens/<id>' } },
    },
    400: BAD_JSON_BODY,
    401: UNAUTHORIZED,
    413: TOO_LARGE,
  },
};

export const listTokens: Operation = {
  operationId: 'listTokens',
  summary: "The live tokens of the caller's workspace, oldest first, without secrets.",
  responses: {
    200: answer('The tokens.', listOf('tokens', ref('Token'))),
    401: UNAUTHORIZED,
  },
};

export const revokeToken: Operation = {
  operationId: 'revokeToken',
  summary: "Revoke a token of the caller's workspace; refused everywhere from the moment the answer is sent.",
  pathParameters: [TOKEN_ID],
  responses: {
    204: { description: 'Revoked.' },
    400: error('`bad_request`: the id is not a token id.'),
    401: UNAUTHORIZED,
    403: error("`forbidden`: a member revokes only their own tokens (an owner any)."),
    404: error('`not_found`: the workspace has no such live token (a token of another workspace is not found either).'),
  },
};
