/**
 * JSON Schema (as the SDK writes it, docs/manifest.md, and as an ASGI app's
 * OpenAPI document gives it) → the types of a client's language, for client
 * exporters. The walk is the same in every language; a `TypeSpelling` says
 * how one language writes what it finds. Object schemas with properties
 * (dataclasses, TypedDicts, pydantic models, nested or under `$defs`/`$ref`,
 * recursive) become named models, registered here once each for the exporter
 * to render; everything else is spelled by the language:
 *
 *   string, integer, number, boolean → scalar(), null → null, array → array()
 *   / tuple(), object without properties → record(), anyOf/oneOf/type lists →
 *   a union, enum/const → literal(), {} and anything unknown → unknown.
 *
 * Part of `svc/plugin`.
 */
import { canonical, isSchema, resolveRef, withDefs, type Schema, type SchemaDefs } from './json-schema.js';
import type { NameScope } from './name-scope.js';

/** How one language writes the types a walk finds, and its models (`Model`). Type texts nest only in `<>`, `[]`, `()`, `{}` and JSON strings. */
export interface TypeSpelling<Model = SchemaModel> {
  /** The type of anything: `{}`, or a schema the language cannot say. A union holding it is it. */
  readonly unknown: string;
  /** The type of JSON null. Unions put it last. */
  readonly null: string;
  /** The name of a model (or a part of one) made from a title, a hint or a JSON key. */
  typeName(text: string): string;
  /** A JSON string, integer, number or boolean; `schema` tells formats apart (base64). */
  scalar(type: 'string' | 'integer' | 'number' | 'boolean', schema: Schema): string;
  array(item: string): string;
  tuple(items: readonly string[]): string;
  /** An object without properties: its keys are strings, its values `value`. */
  record(value: string): string;
  /** The values of an `enum` or a `const`; `unknown` when the language cannot say them. */
  literal(values: readonly unknown[]): string;
  /** The language's model of one object schema (its class's fields), made once the walk is done. */
  model(found: SchemaModel): Model;
}

export interface SchemaProperty {
  /** The JSON key. */
  readonly key: string;
  readonly type: string;
  /** In the object's `required`. */
  readonly required: boolean;
  /** Its own schema (its `default`, its `description`). */
  readonly schema: unknown;
}

/** An object schema with properties, to render as a class or an interface. */
export interface SchemaModel {
  /** Unique in the exporter's scope. */
  readonly name: string;
  /** Its `description`, trimmed; null when none. */
  readonly doc: string | null;
  /** In the schema's order. Filled after the model is registered: a property may refer back to it. */
  readonly properties: SchemaProperty[];
}

/** One walk over the schemas of one module: `type()` for each schema, then `models` to render. */
export class SchemaTypes<Model = SchemaModel> {
  readonly #models: SchemaModel[] = [];
  readonly #spelling: TypeSpelling<Model>;
  readonly #scope: NameScope;
  readonly #byKey = new Map<string, string>();
  readonly #byTitle = new Map<string, string>();
  readonly #expanding = new Set<string>();

  /** `scope` holds the module's other names: model names never clash with them. */
  constructor(spelling: TypeSpelling<Model>, scope: NameScope) {
    this.#spelling = spelling;
    this.#scope = scope;
  }

  /** Every model to generate, in the order met, as the language models them. */
  get models(): Model[] {
    return this.#models.map((found) => this.#spelling.model(found));
  }

  /** The type of `schema`; `hint` names an object schema without a title (`GreetResult`); `defs` are the `$defs` around it. */
  type(schema: unknown, hint: string, defs: SchemaDefs | null = null): string {
    const spell = this.#spelling;
    if (!isSchema(schema)) return spell.unknown;
    const scope = withDefs(schema, defs);
    const ref = schema.$ref;
    if (typeof ref === 'string') return this.#ref(ref, hint, scope);
    for (const key of ['anyOf', 'oneOf'] as const) {
      const members = schema[key];
      if (Array.isArray(members)) return this.union(members.map((member, i) => this.type(member, `${hint}${i + 1}`, scope)));
    }
    const allOf = schema.allOf;
    if (Array.isArray(allOf) && allOf.length === 1) return this.type(allOf[0], hint, scope);
    if (Object.hasOwn(schema, 'const')) return spell.literal([schema.const]);
    if (Array.isArray(schema.enum)) return spell.literal(schema.enum);
    const type = schema.type;
    if (Array.isArray(type)) return this.union(type.map((member) => this.type({ ...schema, type: member }, hint, scope)));
    switch (type) {
      case 'string':
      case 'integer':
      case 'number':
      case 'boolean':
        return spell.scalar(type, schema);
      case 'null':
        return spell.null;
      case 'array':
        return this.#array(schema, hint, scope);
      case 'object':
      case undefined:
        break;
      default:
        return spell.unknown;
    }
    if (isSchema(schema.properties)) return this.#model(schema, `inline:${scope?.id ?? ''}:${canonical(schema)}`, hint, scope);
    if (type === 'object') {
      const values = schema.additionalProperties;
      return spell.record(isSchema(values) ? this.type(values, `${hint}Value`, scope) : spell.unknown);
    }
    // `{"title": "Node"}`: a model being expanded (a recursive type), or one the SDK could not resolve.
    const title = schema.title;
    return typeof title === 'string' ? (this.#byTitle.get(title) ?? spell.unknown) : spell.unknown;
  }

  /** `A | B | null` in this language: members flattened and deduplicated, null last; unknown absorbs everything. */
  union(members: readonly string[]): string {
    return unionOf(members, this.#spelling);
  }

  #array(schema: Schema, hint: string, scope: SchemaDefs | null): string {
    const prefix = schema.prefixItems;
    if (Array.isArray(prefix) && prefix.length > 0)
      return this.#spelling.tuple(prefix.map((item, i) => this.type(item, `${hint}Item${i + 1}`, scope)));
    const items = schema.items;
    return this.#spelling.array(isSchema(items) ? this.type(items, `${hint}Item`, scope) : this.#spelling.unknown);
  }

  #ref(ref: string, hint: string, scope: SchemaDefs | null): string {
    const found = resolveRef(ref, scope);
    if (found === null) return this.#spelling.unknown;
    const { name, target, defs, key } = found;
    if (isSchema(target.properties)) return this.#model({ title: name, ...target }, key, hint, defs);
    if (this.#expanding.has(key)) return this.#spelling.unknown; // a recursive alias that is no model
    this.#expanding.add(key);
    try {
      return this.type(target, this.#spelling.typeName(name), defs);
    } finally {
      this.#expanding.delete(key);
    }
  }

  #model(schema: Schema, key: string, hint: string, scope: SchemaDefs | null): string {
    const known = this.#byKey.get(key);
    if (known !== undefined) return known;
    const title = typeof schema.title === 'string' && schema.title !== '' ? schema.title : null;
    const name = this.#scope.take(this.#spelling.typeName(title ?? hint));
    this.#byKey.set(key, name);
    if (title !== null && !this.#byTitle.has(title)) this.#byTitle.set(title, name);
    const model: SchemaModel = { name, doc: schemaDoc(schema), properties: [] };
    this.#models.push(model); // before its properties: one may refer back to it
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    for (const [jsonKey, property] of Object.entries(schema.properties as Schema)) {
      const type = this.type(property, `${name}${this.#spelling.typeName(jsonKey)}`, scope);
      model.properties.push({ key: jsonKey, type, required: required.has(jsonKey), schema: property });
    }
    return name;
  }
}

/** The `description` of a schema, trimmed; null when it has none. */
export function schemaDoc(schema: unknown): string | null {
  const description = isSchema(schema) ? schema.description : undefined;
  return typeof description === 'string' && description.trim() !== '' ? description.trim() : null;
}

/** The members of a union type, split at the top level only (`Record<string, number | null> | null` has two, as has `dict[str, int | None] | None`). */
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

/** `A | B | null` as `spelling` writes it: members flattened and deduplicated, null last; unknown absorbs everything. */
export function unionOf(members: readonly string[], spelling: Pick<TypeSpelling<unknown>, 'unknown' | 'null'>): string {
  if (members.length === 0 || members.includes(spelling.unknown)) return spelling.unknown;
  const unique = [...new Set(members.flatMap(unionMembers))];
  const some = unique.filter((member) => member !== spelling.null);
  if (some.length === 0) return spelling.null;
  return unique.includes(spelling.null) ? `${some.join(' | ')} | ${spelling.null}` : some.join(' | ');
}

/** Index of the quote that closes the JSON string literal opened at `open`. */
function closingQuote(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return text.length;
}
