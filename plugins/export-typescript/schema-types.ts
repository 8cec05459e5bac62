/**
 * JSON Schema (as the SDK writes it, docs/manifest.md, and as an ASGI app's
 * OpenAPI document gives it) → TypeScript types. Object schemas with
 * properties (dataclasses, TypedDicts, pydantic models, nested or under
 * `$defs`/`$ref`, recursive) become generated interfaces, registered here once
 * each; everything else maps onto TypeScript's own types:
 *
 *   string → string (base64 too: the text as it travels), integer, number →
 *   number, boolean → boolean, null → null, array → T[] / [A, B], object
 *   without properties → Record<string, T>, anyOf/oneOf/type lists → A | B,
 *   enum/const → literal unions, {} and anything unknown → unknown.
 */
import { canonical, isSchema, resolveRef, withDefs, type Schema, type SchemaDefs } from 'svc/plugin';
import { jsDoc, NameScope, propertyKey, typeName } from './names.js';

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
  readonly fields: ModelField[];
}

export class TypeMapper {
  /** Every interface to generate, in the order met. */
  readonly models: Model[] = [];
  readonly #scope: NameScope;
  readonly #byKey = new Map<string, string>();
  readonly #byTitle = new Map<string, string>();
  readonly #expanding = new Set<string>();

  /** `scope` holds the module's other names: interface names never clash with them. */
  constructor(scope: NameScope) {
    this.#scope = scope;
  }

  /** The type of `schema`; `hint` names an object schema without a title (`GreetResult`). */
  type(schema: unknown, hint: string, defs: SchemaDefs | null = null): string {
    if (!isSchema(schema)) return UNKNOWN;
    const scope = withDefs(schema, defs);
    const ref = schema['$ref'];
    if (typeof ref === 'string') return this.#ref(ref, hint, scope);
    for (const key of ['anyOf', 'oneOf'] as const) {
      const members = schema[key];
      if (Array.isArray(members)) return union(members.map((member, i) => this.type(member, `${hint}${i + 1}`, scope)));
    }
    const allOf = schema['allOf'];
    if (Array.isArray(allOf) && allOf.length === 1) return this.type(allOf[0], hint, scope);
    if (Object.hasOwn(schema, 'const')) return literal([schema['const']]);
    if (Array.isArray(schema['enum'])) return literal(schema['enum']);
    const type = schema['type'];
    if (Array.isArray(type)) return union(type.map((member) => this.type({ ...schema, type: member }, hint, scope)));
    switch (type) {
      case 'string':
        return 'string';
      case 'integer':
      case 'number':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'null':
        return 'null';
      case 'array':
        return this.#array(schema, hint, scope);
      case 'object':
      case undefined:
        break;
      default:
        return UNKNOWN;
    }
    if (isSchema(schema['properties'])) return this.#model(schema, `inline:${scope?.id ?? ''}:${canonical(schema)}`, hint, scope);
    if (type === 'object') {
      const values = schema['additionalProperties'];
      return `Record<string, ${isSchema(values) ? this.type(values, `${hint}Value`, scope) : UNKNOWN}>`;
    }
    // `{"title": "Node"}`: an interface being expanded (a recursive type), or one the SDK could not resolve.
    const title = schema['title'];
    return typeof title === 'string' ? (this.#byTitle.get(title) ?? UNKNOWN) : UNKNOWN;
  }

  #array(schema: Schema, hint: string, scope: SchemaDefs | null): string {
    const prefix = schema['prefixItems'];
    if (Array.isArray(prefix) && prefix.length > 0) return `[${prefix.map((item, i) => this.type(item, `${hint}Item${i + 1}`, scope)).join(', ')}]`;
    return arrayOf(isSchema(schema['items']) ? this.type(schema['items'], `${hint}Item`, scope) : UNKNOWN);
  }

  #ref(ref: string, hint: string, scope: SchemaDefs | null): string {
    const found = resolveRef(ref, scope);
    if (found === null) return UNKNOWN;
    const { name, target, defs, key } = found;
    if (isSchema(target['properties'])) return this.#model({ title: name, ...target }, key, hint, defs);
    if (this.#expanding.has(key)) return UNKNOWN; // a recursive alias that is no interface
    this.#expanding.add(key);
    try {
      return this.type(target, typeName(name), defs);
    } finally {
      this.#expanding.delete(key);
    }
  }

  #model(schema: Schema, key: string, hint: string, scope: SchemaDefs | null): string {
    const known = this.#byKey.get(key);
    if (known !== undefined) return known;
    const title = typeof schema['title'] === 'string' && schema['title'] !== '' ? schema['title'] : null;
    const name = this.#scope.take(typeName(title ?? hint));
    this.#byKey.set(key, name);
    if (title !== null && !this.#byTitle.has(title)) this.#byTitle.set(title, name);
    const model: Model = { name, doc: docOf(schema), fields: [] };
    this.models.push(model); // before its fields: a field may refer back to it
    const required = new Set(Array.isArray(schema['required']) ? schema['required'] : []);
    for (const [jsonKey, property] of Object.entries(schema['properties'] as Schema)) {
      const type = this.type(property, `${name}${typeName(jsonKey)}`, scope);
      model.fields.push({ key: jsonKey, type, optional: !required.has(jsonKey), doc: isSchema(property) ? docOf(property) : null });
    }
    return name;
  }
}

/** `export interface Greeting { … }` for each model. */
export function renderModels(models: readonly Model[]): string[] {
  return models.flatMap((model) => [
    ...jsDoc(model.doc),
    `export interface ${model.name} {`,
    ...model.fields.flatMap((field) => [...jsDoc(field.doc, '  '), `  ${propertyKey(field.key)}${field.optional ? '?' : ''}: ${field.type};`]),
    '}',
    '',
  ]);
}

/** `T[]`, parenthesised when T is a union or an intersection. */
export function arrayOf(type: string): string {
  return /[|&]/.test(type) ? `(${type})[]` : `${type}[]`;
}

/** The members of a union type, split at the top level only (`Record<string, number | null> | null` has two). */
export function unionMembers(type: string): string[] {
  const members: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < type.length; i++) {
    const c = type[i]!;
    if ('<[({'.includes(c)) depth++;
    else if ('>])}'.includes(c)) depth--;
    else if (c === '"') i = closingQuote(type, i);
    else if (depth === 0 && type.startsWith(' | ', i)) {
      members.push(type.slice(start, i));
      start = i + 3;
      i += 2;
    }
  }
  members.push(type.slice(start));
  return members;
}

/** `A | B | null`: members flattened and deduplicated, null last; unknown absorbs everything. */
export function union(members: readonly string[]): string {
  if (members.length === 0 || members.includes(UNKNOWN)) return UNKNOWN;
  const unique = [...new Set(members.flatMap(unionMembers))];
  const some = unique.filter((member) => member !== 'null');
  if (some.length === 0) return 'null';
  return unique.includes('null') ? `${some.join(' | ')} | null` : some.join(' | ');
}

/** Index of the quote that closes the JSON string literal opened at `open`. */
function closingQuote(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return text.length;
}

/** A union of literal types of scalar values (`"a" | 1 | true | null`); unknown for anything else. */
function literal(values: readonly unknown[]): string {
  const scalar = (v: unknown) => v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
  if (values.length === 0 || !values.every(scalar)) return UNKNOWN;
  return union(values.map((v) => JSON.stringify(v)));
}

function docOf(schema: Schema): string | null {
  const description = schema['description'];
  return typeof description === 'string' && description.trim() !== '' ? description.trim() : null;
}
