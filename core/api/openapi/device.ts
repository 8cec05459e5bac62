/** The OpenAPI facts of the routes in device.ts, for docs/openapi.json (core/api/openapi.ts). */
import { answer, BAD_JSON_BODY, error, json, ref, TOO_LARGE, UNAUTHORIZED } from './shared.js';
import type { Operation, Response } from './types.js';

const NO_PENDING: Response = error('`not_found`: no pending request has this code (or it expired).');
const DECIDED: Response = error('`conflict`: the request was already approved or denied.');

export const startDeviceAuthorization: Operation = {
  operationId: 'startDeviceAuthorization',
  summary: 'Start a device authorization (RFC 8628 §3.1). Public. JSON or form; unknown parameters are ignored (RFC 6749 §3.1).',
  requestBody: { content: { 'application/json': { schema: ref('DeviceCodeInput') }, 'application/x-www-form-urlencoded': { schema: ref('DeviceCodeInput') } } },
  responses: {
    200: answer('RFC 8628 §3.2.', ref('DeviceAuthorization')),
    400: answer('`invalid_request`: a client_name that is not 1 to 80 characters, a malformed body, a repeated parameter.', ref('OAuthError')),
    413: TOO_LARGE,
  },
};

export const pollDeviceToken: Operation = {
  operationId: 'pollDeviceToken',
  summary: 'Poll for the token (RFC 8628 §3.4). Public. JSON or form; unknown parameters are ignored.',
  requestBody: {
    required: true,
    content: { 'application/json': { schema: ref('DeviceTokenInput') }, 'application/x-www-form-urlencoded': { schema: ref('DeviceTokenInput') } },
  },
  responses: {
    200: answer('The new token, once.', ref('DeviceToken')),
    400: answer('RFC 8628 §3.5 / RFC 6749 §5.2: `authorization_pending`, `slow_down`, `access_denied`, `expired_token`, `invalid_grant`, `invalid_request`, `unsupported_grant_type`.', ref('OAuthError')),
    413: TOO_LARGE,
  },
};

export const approveDevice: Operation = {
  operationId: 'approveDevice',
  summary: "Approve a pending sign-in by its user code, for the caller's workspace; the client's token acts as the caller.",
  requestBody: { required: true, content: json(ref('UserCodeInput')) },
  leftToHandler: { user_code: ['type'] },
  responses: { 200: answer('Approved.', ref('DeviceDecision')), 400: BAD_JSON_BODY, 401: UNAUTHORIZED, 404: NO_PENDING, 409: DECIDED, 413: TOO_LARGE },
};

export const denyDevice: Operation = {
  operationId: 'denyDevice',
  summary: "Deny a pending sign-in by its user code; the client's next poll gets `access_denied`.",
  requestBody: { required: true, content: json(ref('UserCodeInput')) },
  leftToHandler: { user_code: ['type'] },
  responses: { 200: answer('Denied.', ref('DeviceDecision')), 400: BAD_JSON_BODY, 401: UNAUTHORIZED, 404: NO_PENDING, 409: DECIDED, 413: TOO_LARGE },
};
