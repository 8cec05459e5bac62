/**
 * JSON Schema → TypeScript types: the walk is svc/plugin's `SchemaTypes`;
 * this is how TypeScript spells what it finds. Object schemas with properties
 * become generated interfaces; everything else maps onto TypeScript's own types:
 *
 *   string → string (base64 too: the text as it travels), integer, number →
 *   number, boolean → boolean, null → null, array → T[] / [A, B], object
 *   without properties → Record<string, T>, anyOf/oneOf/type lists → A | B,
 *   enum/const → literal unions, {} and anything unknown → unknown.
 */
import { SchemaTypes, schemaDoc, unionMembers, unionOf, type TypeSpelling } from 'svc/plugin';
import { jsDoc, type NameScope, propertyKey, typeName } from './names.js';

/** Re-exported for the renderers, which read types too. */
export { unionMembers };

export const UNKNOWN = 'unknown';

export interface ModelField {
  /** The JSON key, as the interface's property key (quoted when it is no identifier). */
  readonly key: string;
  readonly type: string;
  /** Not in `required`: the property may be left out. */
  readonly optional: boolean;
  readonly doc: string | null;
}

export interface Model {
  readonly name: string;
  readonly doc: string | null;
  readonly fields: readonly ModelField[];
}

const TYPESCRIPT: TypeSpelling<Model> = {
  unknown: UNKNOWN,
  null: 'null',
  typeName,
  scalar: (type) => (type === 'integer' ? 'number' : type),
  array: arrayOf,
  tuple: (items) => `[${items.join(', ')}]`,
  record: (value) => `Record<string, ${value}>`,
  literal,
  model: (found) => ({
    name: found.name,
    doc: found.doc,
    fields: found.properties.map((p) => ({ key: p.key, type: p.type, optional: !p.required, doc: schemaDoc(p.schema) })),
  }),
};

/** `type()`: the TypeScript type of a schema; `models`: every interface to generate. `scope` holds the module's other names. */
export class TypeMapper extends SchemaTypes<Model> {
  constructor(scope: NameScope) {
    super(TYPESCRIPT, scope);
  }
}

/** `export interface Greeting { … }` for each model. */
export function renderModels(models: readonly Model[]): string[] {
  return models.flatMap((model) => [
    ...jsDoc(model.doc),
    `export interface ${model.name} {`,
    ...model.fields.flatMap((field) => [
      ...jsDoc(field.doc, '  '),
      `  ${propertyKey(field.key)}${field.optional ? '?' : ''}: ${field.type};`,
    ]),
    '}',
    '',
  ]);
}

/** `T[]`, parenthesised when T is a union or an intersection. */
export function arrayOf(type: string): string {
  return /[|&]/.test(type) ? `(${type})[]` : `${type}[]`;
}

/** `A | B | null`: members flattened and deduplicated, null last; unknown absorbs everything. */
export function union(members: readonly string[]): string {
  return unionOf(members, TYPESCRIPT);
}

/** A union of literal types of scalar values (`"a" | 1 | true | null`); unknown for anything else. */
function literal(values: readonly unknown[]): string {
  const scalar = (v: unknown) =>
    v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
  if (values.length === 0 || !values.every(scalar)) return UNKNOWN;
  return union(values.map((v) => JSON.stringify(v)));
}
