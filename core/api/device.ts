/**
 * The device authorization grant behind `svc login` (RFC 8628). The two
 * OAuth endpoints are public and speak OAuth: JSON or form bodies, OAuth's
 * error shape, and unknown parameters ignored as RFC 6749 §3.1 requires
 * (clients send `client_id`, `scope`). Approving and denying a code needs a
 * signed-in principal, and a sign-in approved here acts in its workspace.
 */
import type { DeviceAuthorizations } from '../auth/device-flow.js';
import type { Principal } from '../plugin/types.js';
import { oauthError } from './oauth.js';
import * as doc from './openapi/device.js';
import { NO_STORE, type ApiAnswer, type ApiRoute } from './types.js';

/** RFC 8628 §3.4. */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export const deviceRoutes: readonly ApiRoute[] = [
  {
    method: 'POST',
    path: '/device/code',
    auth: 'none',
    body: 'oauth',
    // Each call stores a pending request: a client has no reason for more than a few.
    rateLimit: { burst: 30, perMinute: 30 },
    openapi: doc.startDeviceAuthorization,
    async handle({ body }, { controlPlane }) {
      return { status: 200, body: await controlPlane.devices.start({ clientName: body['client_name'] }), headers: NO_STORE };
    },
  },
  {
    method: 'POST',
    path: '/device/token',
    auth: 'none',
    body: 'oauth',
    // Polite clients poll every `interval` (5 s) and slow_down tells them so; this stops floods.
    rateLimit: { burst: 60, perMinute: 60 },
    openapi: doc.pollDeviceToken,
    async handle({ body }, { controlPlane }) {
      const grantType = body['grant_type'];
      if (grantType === undefined || grantType === '') return oauthError('invalid_request', `the request has no grant_type; use "${DEVICE_CODE_GRANT}"`);
      if (grantType !== DEVICE_CODE_GRANT) return oauthError('unsupported_grant_type', `this endpoint grants only "${DEVICE_CODE_GRANT}"`);
      const deviceCode = body['device_code'];
      if (deviceCode !== undefined && typeof deviceCode !== 'string') return oauthError('invalid_request', 'device_code must be a string');
      return { status: 200, body: await controlPlane.devices.poll(deviceCode), headers: NO_STORE };
    },
  },
  {
    method: 'POST',
    path: '/device/approve',
    auth: 'token',
    body: 'json',
    openapi: doc.approveDevice,
    handle: ({ body, principal }, { controlPlane }) => decide(controlPlane.devices, body, principal, 'approved'),
  },
  {
    method: 'POST',
    path: '/device/deny',
    auth: 'token',
    body: 'json',
    openapi: doc.denyDevice,
    handle: ({ body, principal }, { controlPlane }) => decide(controlPlane.devices, body, principal, 'denied'),
  },
];

async function decide(devices: DeviceAuthorizations, body: Readonly<Record<string, unknown>>, principal: Principal, decision: 'approved' | 'denied'): Promise<ApiAnswer> {
  const userCode = body['user_code'];
  // Looked up first so that the answer can say which client was let in (or not).
  const request = await devices.pending(userCode);
  if (decision === 'approved') await devices.approve(userCode, principal, principal.workspace);
  else await devices.deny(userCode);
  return { status: 200, body: { user_code: request.userCode, client_name: request.clientName, status: decision, workspace: principal.workspace } };
}
