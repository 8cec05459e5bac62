import { isSvcError, SvcError } from './errors.js';

/**
 * The connection to the container broke after it was made: the container
 * died (or was killed) while it held the request. undici reports a peer
 * that closes mid-request as `UND_ERR_SOCKET` ("other side closed").
 */
const BROKEN_CONNECTION = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/**
 * Says what went wrong on the proxy hop, as one SvcError: the client left
 * (`client_closed`, never reported as a bug), the container died with the
 * request (`worker_crashed`, unless `crashCause` — the driver — knows better,
 * such as `memory_limit_exceeded`), or it could not be reached at all
 * (`upstream_unreachable`: ECONNREFUSED, ENOENT, a connect timeout).
 */
export function upstreamError(error: unknown, clientGone: boolean, crashCause?: () => SvcError | undefined): SvcError {
  if (clientGone) {
    return new SvcError('client_closed', 'the client closed the connection before the answer was ready.', { cause: error });
  }
  // Ours already, e.g. payload_too_large from the request body stream.
  if (isSvcError(error)) return error;
  const code = (error as { code?: unknown } | null)?.code;
  // Only the error code reaches the caller: undici's message may name the container's socket path.
  const detail = typeof code === 'string' ? code : 'no error code';
  if (typeof code === 'string' && BROKEN_CONNECTION.has(code)) {
    const known = crashCause?.();
    if (known) return known;
    return new SvcError('worker_crashed', `the container of this workload closed the connection while handling the request (${detail}).`, {
      hint: 'The container probably crashed or exited; the workload logs say why.',
      cause: error,
    });
  }
  return new SvcError('upstream_unreachable', `the container of this workload could not be reached (${detail}).`, {
    hint: 'The container may have exited; the workload logs say why.',
    cause: error,
  });
}
