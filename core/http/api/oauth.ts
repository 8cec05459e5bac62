/**
 * OAuth's error shape for the device-flow endpoints (RFC 8628 §3.5, RFC 6749
 * §5.2): status 400 and `{"error", "error_description"}`, which OAuth clients
 * (and `svc login`) read, instead of svc's `{"error": {"code", …}}`.
 */
import { isDeviceFlowError, type DeviceFlowErrorCode } from '../../services/auth/device-errors.js';
import { isSvcError } from '../../model/errors.js';
import { NO_STORE, type ApiAnswer } from './types.js';

/** The device flow's own errors plus the one RFC 6749 §5.2 error the service never raises: the route checks the grant type. */
export type OAuthErrorCode = DeviceFlowErrorCode | 'unsupported_grant_type';

export function oauthError(error: OAuthErrorCode, description: string): ApiAnswer {
  return { status: 400, body: { error, error_description: description }, headers: NO_STORE };
}

/**
 * The OAuth answer for what an OAuth route threw: its own errors as they
 * are, and svc's "your request is malformed" errors (400: a bad JSON body, a
 * repeated parameter, a client_name of the wrong type) as `invalid_request`
 * with the same message. Anything else (413, 500…) keeps svc's shape: null.
 */
export function oauthAnswerFor(thrown: unknown): ApiAnswer | null {
  if (isDeviceFlowError(thrown)) return { status: thrown.status, body: thrown.body(), headers: NO_STORE };
  if (isSvcError(thrown) && thrown.status === 400) return oauthError('invalid_request', thrown.message);
  return null;
}
