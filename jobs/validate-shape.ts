/**
 * The structural half of the validator: walks a JSON value against the
 * whitelists of jobs/schema.ts and reports unknown keys (Nomad would drop
 * them silently, and match them case-insensitively), wrong types and string
 * durations, each with its JSON path.
 */
import type { FieldType, Scalar, Shape } from './schema.js';
import type { JobIssue } from './types.js';

export function checkShape(value: unknown, shape: Shape, path: string, issues: JobIssue[]): void {
  if (!isObject(value)) {
    issues.push({ path, message: `must be a ${shape.name} object, not ${describe(value)}` });
    return;
  }
  const known = Object.keys(shape.fields);
  for (const [key, field] of Object.entries(value)) {
    const type = shape.fields[key];
    if (type === undefined) {
      const other = known.find((name) => name.toLowerCase() === key.toLowerCase());
      issues.push({
        path: `${path}.${key}`,
        message:
          other !== undefined
            ? `unknown key "${key}": write "${other}" (exact Go field names; Nomad would match it case-insensitively, svc refuses it)`
            : `unknown key "${key}" in ${shape.name}: Nomad would ignore it silently`,
      });
      continue;
    }
    if (field === null) continue; // JSON null = the Go nil pointer: absent.
    checkField(field, type, `${path}.${key}`, issues);
  }
}

function checkField(value: unknown, type: FieldType, path: string, issues: JobIssue[]): void {
  if (typeof type === 'string') return checkScalar(value, type, path, issues);
  if ('obj' in type) return checkShape(value, type.obj, path, issues);
  if ('list' in type) {
    if (!Array.isArray(value)) return void issues.push({ path, message: `must be a list of ${type.list.name}, not ${describe(value)}` });
    value.forEach((item, index) => {
      checkShape(item, type.list, `${path}[${index}]`, issues);
    });
    return;
  }
  if (!isObject(value)) return void issues.push({ path, message: `must be a map of ${type.map.name}, not ${describe(value)}` });
  for (const [key, item] of Object.entries(value)) checkShape(item, type.map, `${path}.${key}`, issues);
}

function checkScalar(value: unknown, type: Scalar, path: string, issues: JobIssue[]): void {
  const fail = (expected: string) => issues.push({ path, message: `must be ${expected}, not ${describe(value)}` });
  switch (type) {
    case 'str':
      if (typeof value !== 'string') fail('a string');
      return;
    case 'bool':
      if (typeof value !== 'boolean') fail('a boolean');
      return;
    case 'int':
      if (!Number.isSafeInteger(value)) fail('an integer');
      return;
    case 'uint':
      if (!Number.isSafeInteger(value) || (value as number) < 0) fail('a non-negative integer');
      return;
    case 'dur':
      if (typeof value === 'string') {
        issues.push({
          path,
          message: `durations are integer nanoseconds in Nomad's JSON API, not the string ${JSON.stringify(value)} (Nomad answers 400)`,
        });
      } else if (!Number.isSafeInteger(value)) fail('an integer number of nanoseconds');
      return;
    case 'strs':
      if (!Array.isArray(value)) return void fail('a list of strings');
      value.forEach((item, index) => {
        if (typeof item !== 'string') issues.push({ path: `${path}[${index}]`, message: `must be a string, not ${describe(item)}` });
      });
      return;
    case 'strMap':
      if (!isObject(value)) return void fail('a map of strings');
      for (const [key, item] of Object.entries(value))
        if (typeof item !== 'string')
          issues.push({ path: `${path}.${key}`, message: `must be a string, not ${describe(item)} (map[string]string)` });
      return;
    case 'headers':
      if (!isObject(value)) return void fail('a map of string lists');
      for (const [key, item] of Object.entries(value)) {
        if (!Array.isArray(item) || item.some((v) => typeof v !== 'string'))
          issues.push({ path: `${path}.${key}`, message: 'must be a list of strings (map[string][]string)' });
      }
      return;
    case 'obj':
      if (!isObject(value)) fail('an object');
      return;
    case 'any':
      return;
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return `${typeof value} ${String(value)}`;
}
