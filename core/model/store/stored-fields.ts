/**
 * Checks on JSON records read back from the state store. A record of the
 * wrong shape means the store was damaged or edited by hand: `state_corrupt`,
 * naming the key and the field, rather than a TypeError somewhere later.
 */
import { SvcError } from '../errors.js';
import type { JsonValidator } from './json.js';
import type { StateEntry } from './types.js';

/** Parses a listed entry's JSON value and validates it, like `getJson` does for one key. */
export function storedJson<T>(entry: StateEntry, validate: JsonValidator<T>): T {
  let parsed: unknown;
  try {
    parsed = JSON.parse(entry.value.toString('utf8'));
  } catch {
    throw corrupt(entry.key, 'is not valid JSON');
  }
  return validate(parsed, entry.key);
}

export type StoredObject = Readonly<Record<string, unknown>>;

export function storedObject(value: unknown, key: string): StoredObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw corrupt(key, 'is not a JSON object');
  return value as StoredObject;
}

export function storedString(record: StoredObject, field: string, key: string): string {
  const value = record[field];
  if (typeof value !== 'string') throw corrupt(key, `has no string field "${field}"`);
  return value;
}

export function storedStringOrNull(record: StoredObject, field: string, key: string): string | null {
  const value = record[field] ?? null;
  if (value !== null && typeof value !== 'string') throw corrupt(key, `has a field "${field}" that is neither a string nor null`);
  return value;
}

export function storedNumber(record: StoredObject, field: string, key: string): number {
  const value = record[field];
  if (typeof value !== 'number' || !Number.isFinite(value)) throw corrupt(key, `has no numeric field "${field}"`);
  return value;
}

export function storedOneOf<T extends string>(record: StoredObject, field: string, key: string, allowed: readonly T[]): T {
  const value = storedString(record, field, key);
  if (!(allowed as readonly string[]).includes(value))
    throw corrupt(key, `has "${field}" = ${JSON.stringify(value)}, not one of ${allowed.join(', ')}`);
  return value as T;
}

/** A stored ISO 8601 time, as milliseconds. */
export function storedTime(record: StoredObject, field: string, key: string): number {
  const ms = Date.parse(storedString(record, field, key));
  if (Number.isNaN(ms)) throw corrupt(key, `has a field "${field}" that is not an ISO 8601 time`);
  return ms;
}

function corrupt(key: string, problem: string): SvcError {
  return new SvcError('state_corrupt', `the state record ${JSON.stringify(key)} ${problem}`, {
    hint: 'The state store holds a record svc did not write; restore the data dir from a backup.',
    details: { key },
  });
}
