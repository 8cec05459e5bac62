/**
 * A document's every schema error as svc's issues (manifests, config files):
 * a path in svc's form (`workloads[1].options.cpu`) and a message in svc's
 * words (`must be a number from 0.125 to 64, got 0`), never Ajv's.
 */
import { type ErrorObject, pointerKeys, type SchemaObject } from './ajv.js';
import { joinPath } from './issue-path.js';

/** One broken rule: `path` like `workloads[1].options.memory`, `images[0].id`, `app.name`. */
export interface ValidationIssue {
  readonly path: string;
  readonly message: string;
}

/**
 * svc's issues for a validator's errors on `data`, in document order: in each object its
 * unknown keys, then its missing keys, then what is wrong in its values, key by key.
 */
export function issuesOf(data: unknown, errors: readonly ErrorObject[] | null | undefined): ValidationIssue[] {
  // A failed `then`/`else` or property name reports its own errors; `if` and `propertyNames` add nothing a user can act on.
  const located = (errors ?? [])
    .filter((error) => error.keyword !== 'if' && error.keyword !== 'propertyNames')
    .map((error) => locate(data, error));
  located.sort((a, b) => compareOrder(a.order, b.order));
  return located.map(({ path, error }) => Object.freeze({ path: path === '' ? '(root)' : path, message: messageOf(error) }));
}

/**
 * Where an error is: its path as svc writes it (indexes of arrays in brackets, keys of objects by name, a
 * missing or unknown key last) and its order: per level, 0 an unknown key, 1 a missing key, else 2 + the place of the key.
 */
function locate(data: unknown, error: ErrorObject): { path: string; order: number[]; error: ErrorObject } {
  let path = '';
  const order: number[] = [];
  let node = data;
  for (const key of pointerKeys(error.instancePath)) {
    path = joinPath(path, Array.isArray(node) ? Number(key) : key);
    order.push(2 + (Array.isArray(node) ? Number(key) : Object.keys(node ?? {}).indexOf(key)));
    node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined;
  }
  if (error.keyword === 'additionalProperties')
    return { path: joinPath(path, String(error.params.additionalProperty)), order: [...order, 0], error };
  if (error.keyword === 'required') return { path: joinPath(path, String(error.params.missingProperty)), order: [...order, 1], error };
  return { path, order, error };
}

function compareOrder(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
    if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  }
  return a.length - b.length;
}

function messageOf(error: ErrorObject): string {
  const parent = (error.parentSchema ?? {}) as SchemaObject;
  const custom = (parent['x-svc-messages'] as Record<string, string> | undefined)?.[error.keyword];
  if (custom !== undefined) return fill(custom, error.data);
  const noun = (parent['x-svc-key-noun'] as string | undefined) ?? 'key';
  switch (error.keyword) {
    case 'x-svc-check':
      return error.message ?? '';
    case 'type': {
      // A number is shown where a number was expected (`must be an integer, got 1.5`), else its type.
      const numeric = [error.schema].flat().some((type) => type === 'number' || type === 'integer');
      return `must be ${typesText(error.schema)}, got ${numeric ? got(error.data) : jsonTypeName(error.data)}`;
    }
    case 'required':
      return `missing ${noun}`;
    case 'additionalProperties':
      return `unknown ${noun}; allowed: ${Object.keys((parent.properties ?? {}) as object).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(error.schema)}, got ${got(error.data)}`;
    case 'enum':
      return `must be one of ${(error.schema as unknown[]).join(', ')}, got ${typeof error.data === 'string' ? JSON.stringify(error.data) : jsonTypeName(error.data)}`;
    case 'minimum':
    case 'maximum':
      return `must be ${parent.type === 'integer' ? 'an integer' : 'a number'} from ${parent.minimum} to ${parent.maximum}, got ${error.data}`;
    default:
      // A keyword without svc words is a schema that needs `x-svc-messages`: say Ajv's rather than nothing.
      return error.message ?? error.keyword;
  }
}

/** "a string", "null or a string", "a boolean or an object". */
function typesText(types: unknown): string {
  const article = (type: string): string => (type === 'null' ? 'null' : /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);
  return (Array.isArray(types) ? types : [types]).map((type) => article(String(type))).join(' or ');
}

/** "null", "array", "object", "string", "number", "boolean". */
function jsonTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** What a message says it got: a number as itself (`got 1.5`), anything else by its JSON type. */
function got(value: unknown): string {
  return typeof value === 'number' ? String(value) : jsonTypeName(value);
}

function fill(template: string, value: unknown): string {
  return template
    .replaceAll('{type}', jsonTypeName(value))
    .replaceAll('{json}', JSON.stringify(value) ?? 'undefined')
    .replaceAll('{count}', Array.isArray(value) ? String(value.length) : '');
}
