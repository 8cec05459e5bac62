/**
 * Small type checks shared by the manifest validators. Each records an issue
 * on the collector and returns whether the value passed, so callers can skip
 * checks that depend on it without stopping the whole validation.
 */
import type { IssueCollector } from '../workload/issues.js';

export type Plain = Record<string, unknown>;

export function isPlainObject(value: unknown): value is Plain {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** "null", "array", "object", "string", "number", "boolean". */
export function jsonTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

export function checkObject(value: unknown, issues: IssueCollector): value is Plain {
  if (isPlainObject(value)) return true;
  issues.add(`must be an object, got ${jsonTypeName(value)}`);
  return false;
}

export function checkArray(value: unknown, issues: IssueCollector): value is unknown[] {
  if (Array.isArray(value)) return true;
  issues.add(`must be an array, got ${jsonTypeName(value)}`);
  return false;
}

export function checkString(value: unknown, issues: IssueCollector, { nonEmpty = false } = {}): value is string {
  if (typeof value !== 'string') {
    issues.add(`must be a string, got ${jsonTypeName(value)}`);
    return false;
  }
  if (nonEmpty && value.trim() === '') {
    issues.add('must not be empty');
    return false;
  }
  return true;
}

export function checkBoolean(value: unknown, issues: IssueCollector): value is boolean {
  if (typeof value === 'boolean') return true;
  issues.add(`must be a boolean, got ${jsonTypeName(value)}`);
  return false;
}

/** A number in [min, max]; `integer` rejects fractions. */
export function checkNumberInRange(
  value: unknown,
  issues: IssueCollector,
  range: { readonly min: number; readonly max: number; readonly integer: boolean },
): value is number {
  const what = range.integer ? 'an integer' : 'a number';
  if (typeof value !== 'number' || !Number.isFinite(value) || (range.integer && !Number.isInteger(value))) {
    const got = typeof value === 'number' ? String(value) : jsonTypeName(value);
    issues.add(`must be ${what}, got ${got}`);
    return false;
  }
  if (value < range.min || value > range.max) {
    issues.add(`must be ${what} from ${range.min} to ${range.max}, got ${value}`);
    return false;
  }
  return true;
}

/**
 * Reports keys outside `allowed` (naming the allowed ones) and allowed keys
 * that are missing, except `optional` ones. `noun` reads in messages: "unknown option", "missing key".
 */
export function checkKeys(object: Plain, allowed: readonly string[], issues: IssueCollector, noun = 'key', context = '', optional: ReadonlySet<string> = new Set()): void {
  const suffix = context === '' ? '' : ` ${context}`;
  for (const key of Object.keys(object)) {
    if (!allowed.includes(key)) issues.at(key).add(`unknown ${noun}${suffix}; allowed: ${allowed.join(', ')}`);
  }
  for (const key of allowed) {
    if (!Object.hasOwn(object, key) && !optional.has(key)) issues.at(key).add(`missing ${noun}${suffix}`);
  }
}
