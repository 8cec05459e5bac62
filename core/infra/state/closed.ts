/**
 * The error of a call on a closed state store. Watch loops end on it, and
 * only on it: a Consul KV store that cannot reach Consul answers
 * `state_unavailable` too, and a loop that stopped then would never hear of
 * another change (a revoked token, a new route) after a Consul blip.
 */
import { isSvcError, SvcError } from '../../model/errors.js';

export function storeClosedError(): SvcError {
  return new SvcError('state_unavailable', 'the state store is closed', { details: { closed: true } });
}

export function isStoreClosed(error: unknown): boolean {
  return isSvcError(error) && error.code === 'state_unavailable' && (error.details as { closed?: unknown } | undefined)?.closed === true;
}
