/**
 * The device authorization grant behind `svc login` (RFC 8628). The two
 * OAuth endpoints are public and speak OAuth: JSON or form bodies, OAuth's
 * error shape, and unknown parameters ignored as RFC 6749 §3.1 requires
 * (clients send `client_id`, `scope`). Approving and denying a code needs a
 * signed-in principal, and a sign-in approved here acts in its workspace.
 */
import type { DeviceAuthorizations } from '../../services/auth/device-flow.js';
import type { Principal } from '../../infra/plugin/types.js';
import { oauthError } from './oauth.js';
import { answer, BAD_JSON_BODY, error, json, ref } from './openapi/shared.js';
import type { Response } from './openapi/types.js';
import { NO_STORE, type ApiAnswer, type ApiRoute } from './types.js';

/** RFC 8628 §3.4. */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

const NO_PENDING: Response = error('`not_found`: no pending request has this code (or it expired).');
const DECIDED: Response = error('`conflict`: the request was already approved or denied.');

export const deviceRoutes: readonly ApiRoute[] = [
  {
    method: 'POST',
    path: '/device/code',
    auth: 'none',
    body: 'oauth',
    // Each call stores a pending request: a client has no reason for more than a few.
    rateLimit: { burst: 30, perMinute: 30 },
    openapi: {
      operationId: 'startDeviceAuthorization',
      summary: 'Start a device authorization (RFC 8628 §3.1). Public. JSON or form; unknown parameters are ignored (RFC 6749 §3.1).',
      requestBody: {
        content: {
          'application/json': { schema: ref('DeviceCodeInput') },
          'application/x-www-form-urlencoded': { schema: ref('DeviceCodeInput') },
        },
      },
      responses: {
        200: answer('RFC 8628 §3.2.', ref('DeviceAuthorization')),
        400: answer(
          '`invalid_request`: a client_name that is not 1 to 80 characters, a malformed body, a repeated parameter.',
          ref('OAuthError'),
        ),
      },
    },
    async handle({ body }, { controlPlane }) {
      // Ignored, as RFC 8628 lets a public client's be; but one given must be the string it declares.
      if (body.client_id !== undefined && typeof body.client_id !== 'string')
        return oauthError('invalid_request', 'client_id must be a string');
      return { status: 200, body: await controlPlane.devices.start({ clientName: body.client_name }), headers: NO_STORE };
    },
  },
  {
    method: 'POST',
    path: '/device/token',
    auth: 'none',
    body: 'oauth',
    // Polite clients poll every `interval` (5 s) and slow_down tells them so; this stops floods.
    rateLimit: { burst: 60, perMinute: 60 },
    openapi: {
      operationId: 'pollDeviceToken',
      summary: 'Poll for the token (RFC 8628 §3.4). Public. JSON or form; unknown parameters are ignored.',
      requestBody: {
        required: true,
        content: {
          'application/json': { schema: ref('DeviceTokenInput') },
          'application/x-www-form-urlencoded': { schema: ref('DeviceTokenInput') },
        },
      },
      responses: {
        200: answer('The new token, once.', ref('DeviceToken')),
        400: answer(
          'RFC 8628 §3.5 / RFC 6749 §5.2: `authorization_pending`, `slow_down`, `access_denied`, `expired_token`, `invalid_grant`, `invalid_request`, `unsupported_grant_type`.',
          ref('OAuthError'),
        ),
      },
    },
    async handle({ body }, { controlPlane }) {
      const grantType = body.grant_type;
      if (grantType === undefined || grantType === '')
        return oauthError('invalid_request', `the request has no grant_type; use "${DEVICE_CODE_GRANT}"`);
      if (grantType !== DEVICE_CODE_GRANT) return oauthError('unsupported_grant_type', `this endpoint grants only "${DEVICE_CODE_GRANT}"`);
      const deviceCode = body.device_code;
      if (deviceCode !== undefined && typeof deviceCode !== 'string') return oauthError('invalid_request', 'device_code must be a string');
      return { status: 200, body: await controlPlane.devices.poll(deviceCode), headers: NO_STORE };
    },
  },
  {
    method: 'POST',
    path: '/device/approve',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'approveDevice',
      summary: "Approve a pending sign-in by its user code, for the caller's workspace; the client's token acts as the caller.",
      requestBody: { required: true, content: json(ref('UserCodeInput')) },
      leftToHandler: { user_code: ['type'] },
      responses: { 200: answer('Approved.', ref('DeviceDecision')), 400: BAD_JSON_BODY, 404: NO_PENDING, 409: DECIDED },
    },
    handle: ({ body, principal }, { controlPlane }) => decide(controlPlane.devices, body, principal, 'approved'),
  },
  {
    method: 'POST',
    path: '/device/deny',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'denyDevice',
      summary: "Deny a pending sign-in by its user code; the client's next poll gets `access_denied`.",
      requestBody: { required: true, content: json(ref('UserCodeInput')) },
      leftToHandler: { user_code: ['type'] },
      responses: { 200: answer('Denied.', ref('DeviceDecision')), 400: BAD_JSON_BODY, 404: NO_PENDING, 409: DECIDED },
    },
    handle: ({ body, principal }, { controlPlane }) => decide(controlPlane.devices, body, principal, 'denied'),
  },
];

async function decide(
  devices: DeviceAuthorizations,
  body: Readonly<Record<string, unknown>>,
  principal: Principal,
  decision: 'approved' | 'denied',
): Promise<ApiAnswer> {
  const userCode = body.user_code;
  // Looked up first so that the answer can say which client was let in (or not).
  const request = await devices.pending(userCode);
  if (decision === 'approved') await devices.approve(userCode, principal, principal.workspace);
  else await devices.deny(userCode);
  return {
    status: 200,
    body: { user_code: request.userCode, client_name: request.clientName, status: decision, workspace: principal.workspace },
  };
}
