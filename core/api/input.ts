/**
 * Checks of request bodies shared by the routes. The services check the
 * values themselves (a token's expiry, a plan, a user code); these check
 * the shape: no field the route does not know, required fields present.
 */
import { SvcError } from '../errors.js';

/** Refuses any field not in `known`, naming it and the fields the route takes (a typo must not be ignored). */
export function onlyFields(body: Readonly<Record<string, unknown>>, known: readonly string[]): void {
  for (const field of Object.keys(body)) {
    if (known.includes(field)) continue;
    const takes = known.length === 0 ? 'takes no fields' : `takes ${known.map((k) => JSON.stringify(k)).join(', ')}`;
    throw new SvcError('bad_request', `unknown field ${JSON.stringify(field)}; this route ${takes}.`, { details: { field } });
  }
}

/** The field's value, which must be present (not missing or null). */
export function required(body: Readonly<Record<string, unknown>>, field: string): unknown {
  const value = body[field];
  if (value === undefined || value === null) throw new SvcError('bad_request', `the field ${JSON.stringify(field)} is required.`, { details: { field } });
  return value;
}

/** A required string field. */
export function requiredString(body: Readonly<Record<string, unknown>>, field: string): string {
  const value = required(body, field);
  if (typeof value !== 'string') throw new SvcError('bad_request', `the field ${JSON.stringify(field)} must be a string, not ${Array.isArray(value) ? 'an array' : typeof value}.`, { details: { field } });
  return value;
}

/** An optional true/false field; false when missing or null. */
export function optionalBoolean(body: Readonly<Record<string, unknown>>, field: string): boolean {
  const value = body[field];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw new SvcError('bad_request', `the field ${JSON.stringify(field)} must be true or false, not ${JSON.stringify(value)}.`, { details: { field } });
  return value;
}

/** An optional whole number in [min, max]; `fallback` when missing or null. */
export function optionalInteger(body: Readonly<Record<string, unknown>>, field: string, range: { readonly min: number; readonly max: number }, fallback: number): number {
  const value = body[field];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < range.min || value > range.max) {
    throw new SvcError('bad_request', `the field ${JSON.stringify(field)} must be a whole number from ${range.min} to ${range.max}, not ${JSON.stringify(value)}.`, { details: { field } });
  }
  return value;
}
