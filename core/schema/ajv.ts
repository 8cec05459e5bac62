/**
 * svc's one Ajv (JSON Schema 2020-12) and the translation of its errors into
 * svc's issues: a path in svc's form (`workloads[1].options.cpu`) and a message
 * in svc's words (`must be a number from 0.125 to 64, got 0`), never Ajv's.
 *
 * Schemas may carry three svc keywords, which other JSON Schema tools ignore:
 * - `x-svc-messages`: svc's message for a keyword of that schema, overriding the
 *   default one; `{type}`, `{json}` and `{count}` are filled in (see `fill`).
 * - `x-svc-key-noun`: what `required` and `additionalProperties` call a key
 *   ("option for kind endpoint" gives "unknown option for kind endpoint; allowed: …").
 * - `x-svc-check`: the name of a check (`defineChecks`) for what a schema cannot
 *   say: rules with their own messages, and values resolved against each other.
 */
import { Ajv2020, type ErrorObject, type SchemaObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { joinPath } from '../workload/issues.js';
import type { ValidationIssue } from '../workload/types.js';

export type { SchemaObject, ValidateFunction };

/** Reports a problem with the checked value, or with a child of it (`segments` below it). */
export type Report = (message: string, ...segments: (string | number)[]) => void;
/** A check named by `x-svc-check`: `root` is the whole document being validated. */
export type Check = (value: unknown, report: Report, root: unknown) => void;

const checks = new Map<string, Check>();

/** Makes checks available to `x-svc-check`; a name is defined once. */
export function defineChecks(named: Readonly<Record<string, Check>>): void {
  for (const [name, check] of Object.entries(named)) {
    if (checks.has(name)) throw new Error(`x-svc-check ${name} is defined twice`);
    checks.set(name, check);
  }
}

const ajv = new Ajv2020({ allErrors: true, verbose: true, strict: true, strictRequired: false, allowUnionTypes: true });
ajv.addKeyword({ keyword: 'x-svc-messages', schemaType: 'object' });
ajv.addKeyword({ keyword: 'x-svc-key-noun', schemaType: 'string' });
ajv.addKeyword({
  keyword: 'x-svc-check',
  schemaType: 'string',
  errors: true,
  validate: function runCheck(name: string, value: unknown, _schema?: unknown, context?: { instancePath: string; rootData: unknown }) {
    const check = checks.get(name);
    if (check === undefined) throw new Error(`x-svc-check ${name} is not defined`);
    const errors: Partial<ErrorObject>[] = [];
    check(value, (message, ...segments) => {
      const below = segments.map((segment) => `/${String(segment).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
      errors.push({ keyword: 'x-svc-check', instancePath: `${context?.instancePath ?? ''}${below}`, params: {}, message });
    }, context?.rootData);
    (runCheck as { errors?: Partial<ErrorObject>[] }).errors = errors;
    return errors.length === 0;
  },
});

/** Compiles a schema once; validate with it, then turn its `errors` into issues with `issuesOf`. */
export function compile<T = unknown>(schema: SchemaObject): ValidateFunction<T> {
  return ajv.compile<T>(schema);
}

/** The validator of a part of a compiled schema, by its `$id` and a JSON pointer (`#/$defs/x`). */
export function compiledPart(ref: string): ValidateFunction {
  const validate = ajv.getSchema(ref);
  if (validate === undefined) throw new Error(`no schema ${ref}`);
  return validate;
}

/**
 * svc's issues for a validator's errors on `data`, in document order: in each object its
 * unknown keys, then its missing keys, then what is wrong in its values, key by key.
 */
export function issuesOf(data: unknown, errors: readonly ErrorObject[] | null | undefined): ValidationIssue[] {
  // A failed `then`/`else` or property name reports its own errors; `if` and `propertyNames` add nothing a user can act on.
  const located = (errors ?? []).filter((error) => error.keyword !== 'if' && error.keyword !== 'propertyNames').map((error) => locate(data, error));
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
  for (const raw of error.instancePath === '' ? [] : error.instancePath.slice(1).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    path = joinPath(path, Array.isArray(node) ? Number(key) : key);
    order.push(2 + (Array.isArray(node) ? Number(key) : Object.keys(node ?? {}).indexOf(key)));
    node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined;
  }
  if (error.keyword === 'additionalProperties') return { path: joinPath(path, String(error.params.additionalProperty)), order: [...order, 0], error };
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
