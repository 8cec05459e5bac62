/** Checks what a caller asks for when creating a token: its name and expiry. */
import { SvcError } from '../../model/errors.js';
import { isoAt } from '../../model/clock.js';

export const TOKEN_NAME_MAX_LENGTH = 100;
/** The latest a token may expire: one year after its creation. */
export const TOKEN_MAX_LIFETIME_MS = 365 * 24 * 60 * 60_000;

/** A name for people to recognise the token by: optional, 1–100 characters, no control characters. */
export function checkTokenName(name: unknown): string | null {
  if (name === undefined || name === null) return null;
  if (typeof name !== 'string') throw invalid('name', `the token name must be a string, not ${typeof name}`);
  const trimmed = name.trim();
  if (trimmed.length === 0) throw invalid('name', 'the token name must not be empty (leave it out for no name)');
  if (trimmed.length > TOKEN_NAME_MAX_LENGTH)
    throw invalid('name', `the token name is ${trimmed.length} characters long; at most ${TOKEN_NAME_MAX_LENGTH} are allowed`);
  if (/[\u0000-\u001f\u007f]/.test(trimmed)) throw invalid('name', 'the token name must not contain control characters (such as newlines)');
  return trimmed;
}

/**
 * The expiry as a stored ISO string, or null for none. Must be an ISO 8601
 * date-time with a time zone, after `now`, and at most one year after it.
 */
export function checkTokenExpiry(expiresAt: unknown, now: number): string | null {
  if (expiresAt === undefined || expiresAt === null) return null;
  if (typeof expiresAt !== 'string') throw invalid('expiresAt', `expiresAt must be an ISO 8601 date-time string, not ${typeof expiresAt}`);
  // Date.parse alone would read a date without a zone as local time: require one.
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(expiresAt) ? Date.parse(expiresAt) : NaN;
  if (Number.isNaN(ms)) {
    throw invalid(
      'expiresAt',
      `expiresAt ${JSON.stringify(expiresAt)} is not an ISO 8601 date-time with a time zone, such as "2030-01-31T12:00:00Z"`,
    );
  }
  if (ms <= now) throw invalid('expiresAt', `expiresAt ${expiresAt} is not in the future (now is ${isoAt(now)})`);
  const latest = now + TOKEN_MAX_LIFETIME_MS;
  if (ms > latest)
    throw invalid('expiresAt', `expiresAt ${expiresAt} is more than one year away; the latest allowed now is ${isoAt(latest)}`);
  return isoAt(ms);
}

function invalid(field: string, message: string): SvcError {
  return new SvcError('bad_request', message, { details: { field } });
}
