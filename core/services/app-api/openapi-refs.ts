/**
 * JSON Schemas out of an OpenAPI 3.0/3.1 document, made plain JSON Schema
 * for a generator: `$ref`s to `#/components/schemas/X` become `#/$defs/X`
 * (resolved against the interface's `definitions`), 3.0's `nullable: true`
 * becomes an `anyOf` with `{"type": "null"}`, and what cannot be followed
 * (a `$ref` elsewhere, too deep a schema) becomes `{}` with a note.
 * Copies: the document is never changed.
 */
import type { JsonSchema } from '../../model/workload/types.js';

/** Deeper schemas than this are cut (`{}`): nothing real nests so far, a hostile document may. */
const MAX_DEPTH = 48;

export type Note = (text: string) => void;

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `#/components/<section>/<name>` → the name (JSON Pointer escapes undone); null for any other reference. */
export function componentName(ref: unknown, section: string): string | null {
  if (typeof ref !== 'string') return null;
  const prefix = `#/components/${section}/`;
  if (!ref.startsWith(prefix)) return null;
  const name = ref.slice(prefix.length);
  return name.includes('/') ? null : name.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** A schema of the document as plain JSON Schema (see the file's comment); `{}` when `value` is none. */
export function plainSchema(value: unknown, where: string, note: Note): JsonSchema {
  const cut = { done: false };
  const schema = convert(value, 0, where, note, cut);
  return isObject(schema) ? (schema as JsonSchema) : {};
}

/** Keywords whose value is a schema, a list of schemas, or schemas by name (whose keys are names, not keywords). */
const ONE_SCHEMA = new Set([
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
  'additionalItems',
]);
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

function convert(value: unknown, depth: number, where: string, note: Note, cut: { done: boolean }): unknown {
  if (!isObject(value)) return typeof value === 'boolean' ? value : {};
  if (depth > MAX_DEPTH) {
    if (!cut.done) note(`${where}: a schema nests deeper than ${MAX_DEPTH} levels; the rest is typed as any`);
    cut.done = true;
    return {};
  }
  if (Object.hasOwn(value, '$ref')) return reference(value, where, note);
  const next = (item: unknown) => convert(item, depth + 1, where, note, cut);
  const entries: [string, unknown][] = [];
  for (const [key, item] of Object.entries(value)) {
    if (key === 'nullable') continue;
    if (ONE_SCHEMA.has(key)) entries.push([key, next(item)]);
    else if (SCHEMA_LISTS.has(key)) entries.push([key, Array.isArray(item) ? item.map(next) : []]);
    else if (SCHEMA_MAPS.has(key))
      entries.push([key, isObject(item) ? Object.fromEntries(Object.entries(item).map(([name, schema]) => [name, next(schema)])) : {}]);
    // Values, not schemas (enum, default, examples, …): as they are.
    else entries.push([key, item]);
  }
  const schema = Object.fromEntries(entries);
  return value.nullable === true ? nullable(schema) : schema;
}

function reference(value: Record<string, unknown>, where: string, note: Note): unknown {
  const name = componentName(value.$ref, 'schemas');
  if (name === null) {
    note(`${where}: the reference ${JSON.stringify(String(value.$ref)).slice(0, 120)} is not to #/components/schemas; typed as any`);
    return {};
  }
  // OpenAPI 3.1 allows siblings of $ref (description, nullable in 3.0 practice): kept around it.
  const siblings = Object.entries(value).filter(([key]) => key !== '$ref' && key !== 'nullable');
  const target = { $ref: `#/$defs/${name.replace(/~/g, '~0').replace(/\//g, '~1')}` };
  // Siblings are annotations (description, default, …): kept as they are, the reference under allOf.
  const schema = siblings.length === 0 ? target : { ...Object.fromEntries(siblings), allOf: [target] };
  return value.nullable === true ? nullable(schema) : schema;
}

/** 3.0's `nullable: true`: the schema or null; its annotations (title, default, description) stay outside. */
function nullable(schema: Record<string, unknown>): Record<string, unknown> {
  const outer: Record<string, unknown> = {};
  const inner: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(schema)) {
    if (key === 'title' || key === 'default' || key === 'description') outer[key] = item;
    else inner[key] = item;
  }
  return { ...outer, anyOf: [inner, { type: 'null' }] };
}
