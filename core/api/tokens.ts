/**
 * Access tokens of the caller's workspace: create (the secret is in this
 * answer and nowhere else, ever), list (never a secret), revoke (refused by
 * the gateway from the moment the 204 is sent). A token of another workspace
 * is `not_found`, exactly like one that does not exist.
 */
import * as doc from './openapi/tokens.js';
import { API_PREFIX, NO_STORE, type ApiRoute } from './types.js';
import { roleOf } from './role.js';

export const tokenRoutes: readonly ApiRoute[] = [
  {
    method: 'POST',
    path: '/tokens',
    auth: 'token',
    body: 'json',
    openapi: doc.createToken,
    async handle({ body, principal }, { controlPlane }) {
      const { secret, token } = await controlPlane.tokens.create({ name: body['name'], expiresAt: body['expiresAt'] }, principal);
      return { status: 201, body: { ...token, secret }, headers: { ...NO_STORE, Location: `${API_PREFIX}/tokens/${token.id}` } };
    },
  },
  {
    method: 'GET',
    path: '/tokens',
    auth: 'token',
    body: 'none',
    openapi: doc.listTokens,
    async handle({ principal }, { controlPlane }) {
      return { status: 200, body: { tokens: await controlPlane.tokens.list(principal) } };
    },
  },
  {
    method: 'DELETE',
    path: '/tokens/:id',
    auth: 'token',
    body: 'none',
    openapi: doc.revokeToken,
    async handle({ params, principal }, { controlPlane }) {
      await controlPlane.tokens.revoke(params['id'], principal, await roleOf(principal, controlPlane.accounts));
      return { status: 204 };
    },
  },
];
