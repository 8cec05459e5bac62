/**
 * The errors of the device flow's token endpoint, in OAuth's own shape
 * (RFC 8628 §3.5, RFC 6749 §5.2), not svc's: `svc login` and any OAuth
 * client read `{"error": "authorization_pending"}` with status 400. The HTTP
 * route answers `status` with `body()`; the CLI matches on `error`.
 */

export const DEVICE_FLOW_ERRORS = {
  /** Not approved or denied yet: keep polling at `interval`. */
  authorization_pending: 'the sign-in has not been approved yet',
  /** Polled faster than `interval`: keep polling, with the interval 5 s longer from now on. */
  slow_down: 'polling too fast; the interval is now 5 seconds longer',
  /** The user denied the request: stop. */
  access_denied: 'the sign-in request was denied',
  /** The device code expired before approval: stop, and start again. */
  expired_token: 'the device code has expired; start `svc login` again',
  /** The device code is unknown, or its token was already issued: stop. */
  invalid_grant: 'the device code is unknown or was already used',
  /** No device code was sent. */
  invalid_request: 'the request has no device_code',
} as const;

export type DeviceFlowErrorCode = keyof typeof DEVICE_FLOW_ERRORS;

export interface DeviceFlowErrorBody {
  readonly error: DeviceFlowErrorCode;
  readonly error_description: string;
}

export class DeviceFlowError extends Error {
  readonly error: DeviceFlowErrorCode;
  /** Every error of the token endpoint is 400 (RFC 6749 §5.2). */
  readonly status = 400;

  constructor(error: DeviceFlowErrorCode, description: string = DEVICE_FLOW_ERRORS[error]) {
    super(description);
    this.name = 'DeviceFlowError';
    this.error = error;
  }

  body(): DeviceFlowErrorBody {
    return { error: this.error, error_description: this.message };
  }
}

export function isDeviceFlowError(value: unknown): value is DeviceFlowError {
  return value instanceof DeviceFlowError;
}
