/** The OpenAPI facts of the routes in sign-in.ts, for docs/openapi.json (core/api/openapi.ts). */
import { answer, BAD_JSON_BODY, error, json, ref, TOO_LARGE } from './shared.js';
import type { Operation } from './types.js';

export const signIn: Operation = {
  operationId: 'signIn',
  summary: "Trade a one-time sign-in link's secret for a 12-hour session token. Public.",
  requestBody: {
    required: true,
    content: json({
      type: 'object',
      required: ['secret'],
      additionalProperties: false,
      properties: { secret: { type: 'string', description: 'The part of the link after `#`.' } },
    }),
  },
  responses: {
    200: answer('The session token with its secret.', ref('SignIn')),
    400: BAD_JSON_BODY,
    401: error('`unauthorized`: the link is invalid, expired or already used.'),
    413: TOO_LARGE,
  },
};

export const createSignInLink: Operation = {
  operationId: 'createSignInLink',
  summary: "A fresh one-time dashboard sign-in link for the caller's own account (`svc dashboard`).",
  requestBody: { required: false, content: json({ type: 'object', additionalProperties: false, properties: {} }) },
  responses: {
    201: answer("The link's path (append it to the server's URL), when it expires, and whose it is.", ref('SignInLink')),
    400: error('`bad_request` (an unknown field, a body that is not a JSON object) or `invalid_json`.'),
    401: error('`unauthorized`: no valid token.'),
    403: error('`forbidden`: the token acts as no account.'),
    413: TOO_LARGE,
  },
};
