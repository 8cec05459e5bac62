/**
 * Access tokens of the caller's workspace: create (the secret is in this
 * answer and nowhere else, ever), list (never a secret), revoke (refused by
 * the gateway from the moment the 204 is sent). A token of another workspace
 * is `not_found`, exactly like one that does not exist.
 */
import { answer, BAD_JSON_BODY, error, json, listOf, ref } from './openapi/shared.js';
import type { Parameter } from './openapi/types.js';
import { API_PREFIX, NO_STORE, type ApiRoute } from './types.js';
import { roleOf } from './role.js';
import { notTokenId, TOKEN_ID as TOKEN_ID_PATTERN } from '../../services/auth/token-service.js';

const TOKEN_ID: Parameter = {
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: TOKEN_ID_PATTERN.source },
  refusal: { code: 'bad_request', refuse: notTokenId },
};

export const tokenRoutes: readonly ApiRoute[] = [
  {
    method: 'POST',
    path: '/tokens',
    auth: 'token',
    body: 'json',
    openapi: {
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
      },
    },
    async handle({ body, principal }, { controlPlane }) {
      const { secret, token } = await controlPlane.tokens.create({ name: body.name, expiresAt: body.expiresAt }, principal);
      return { status: 201, body: { ...token, secret }, headers: { ...NO_STORE, Location: `${API_PREFIX}/tokens/${token.id}` } };
    },
  },
  {
    method: 'GET',
    path: '/tokens',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'listTokens',
      summary: "The live tokens of the caller's workspace, oldest first, without secrets.",
      responses: {
        200: answer('The tokens.', listOf('tokens', ref('Token'))),
      },
    },
    async handle({ principal }, { controlPlane }) {
      return { status: 200, body: { tokens: await controlPlane.tokens.list(principal) } };
    },
  },
  {
    method: 'DELETE',
    path: '/tokens/:id',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'revokeToken',
      summary: "Revoke a token of the caller's workspace; refused everywhere from the moment the answer is sent.",
      pathParameters: [TOKEN_ID],
      responses: {
        204: { description: 'Revoked.' },
        400: error('`bad_request`: the id is not a token id.'),
        403: error('`forbidden`: a member revokes only their own tokens (an owner any).'),
        404: error('`not_found`: the workspace has no such live token (a token of another workspace is not found either).'),
      },
    },
    async handle({ params, principal }, { controlPlane }) {
      await controlPlane.tokens.revoke(params.id, principal, await roleOf(principal, controlPlane.accounts));
      return { status: 204 };
    },
  },
];
