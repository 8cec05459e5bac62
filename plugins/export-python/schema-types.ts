/**
 * JSON Schema (as the SDK writes it: docs/manifest.md) → Python annotations.
 * Object schemas with properties (dataclasses, TypedDicts, pydantic models,
 * nested or under `$defs`/`$ref`) become generated dataclasses, registered
 * here once each; everything else maps onto builtins and `typing`:
 *
 *   string → str (base64 → bytes), integer → int, number → float, boolean → bool,
 *   null → None, array → list[T] / tuple[A, B], object without properties →
 *   dict[str, T], anyOf/oneOf/type lists → A | B, enum/const → Literal[...],
 *   {} and anything unknown → typing.Any.
 */
import { canonical, isSchema, resolveRef, withDefs, type Schema, type SchemaDefs } from 'svc/plugin';
import { className, identifier, NameScope, pyLiteral } from './names.js';

/** Re-exported for the renderers, which read schemas too. */
export { isSchema };

export interface ModelField {
  /** The Python attribute. */
  readonly name: string;
  /** The JSON key (differs from `name` when the key is not an identifier). */
  readonly key: string;
  readonly type: string;
  /** The default as a Python literal (`factory`: a list or dict, made fresh for each instance); null when required. */
  readonly default: { readonly literal: string; readonly factory: boolean } | null;
  /** Not required and without a default: None, left out of the JSON. */
  readonly omitWhenNone: boolean;
}

export interface Model {
  readonly name: string;
  readonly doc: string | null;
  readonly fields: ModelField[];
  kwOnly: boolean;
}

export const ANY = 'typing.Any';
/** Field names that would break the class: `self` (its __init__), and names its annotations read. */
const FIELD_SHADOWS = new Set(['self', '_dc', 'typing', 'str', 'int', 'float', 'bool', 'bytes', 'list', 'dict', 'tuple']);

export class TypeMapper {
  /** Every dataclass to generate, in the order met. */
  readonly models: Model[] = [];
  readonly #scope: NameScope;
  readonly #byKey = new Map<string, string>();
  readonly #byTitle = new Map<string, string>();
  readonly #expanding = new Set<string>();

  /** `scope` holds the module's other names: class names never clash with them. */
  constructor(scope: NameScope) {
    this.#scope = scope;
  }

  /** The annotation of `schema`; `hint` names an object schema without a title (`GreetResult`). */
  annotation(schema: unknown, hint: string, defs: SchemaDefs | null = null): string {
    if (!isSchema(schema)) return ANY;
    const scope = withDefs(schema, defs);
    const ref = schema['$ref'];
    if (typeof ref === 'string') return this.#ref(ref, hint, scope);
    for (const key of ['anyOf', 'oneOf'] as const) {
      const members = schema[key];
      if (Array.isArray(members)) return union(members.map((member, i) => this.annotation(member, `${hint}${i + 1}`, scope)));
    }
    const allOf = schema['allOf'];
    if (Array.isArray(allOf) && allOf.length === 1) return this.annotation(allOf[0], hint, scope);
    if (Object.hasOwn(schema, 'const')) return literal([schema['const']]);
    if (Array.isArray(schema['enum'])) return literal(schema['enum']);
    const type = schema['type'];
    if (Array.isArray(type)) return union(type.map((member) => this.annotation({ ...schema, type: member }, hint, scope)));
    switch (type) {
      case 'string':
        return schema['contentEncoding'] === 'base64' || schema['contentMediaType'] === 'application/octet-stream' ? 'bytes' : 'str';
      case 'integer':
        return 'int';
      case 'number':
        return 'float';
      case 'boolean':
        return 'bool';
      case 'null':
        return 'None';
      case 'array':
        return this.#array(schema, hint, scope);
      case 'object':
      case undefined:
        break;
      default:
        return ANY;
    }
    if (isSchema(schema['properties'])) return this.#model(schema, `inline:${scope?.id ?? ''}:${canonical(schema)}`, hint, scope);
    if (type === 'object') {
      const values = schema['additionalProperties'];
      return `dict[str, ${isSchema(values) ? this.annotation(values, `${hint}Value`, scope) : ANY}]`;
    }
    // `{"title": "Node"}`: a class being expanded (a recursive type), or one the SDK could not resolve.
    const title = schema['title'];
    return typeof title === 'string' ? (this.#byTitle.get(title) ?? ANY) : ANY;
  }

  #array(schema: Schema, hint: string, scope: SchemaDefs | null): string {
    const prefix = schema['prefixItems'];
    if (Array.isArray(prefix) && prefix.length > 0) return `tuple[${prefix.map((item, i) => this.annotation(item, `${hint}Item${i + 1}`, scope)).join(', ')}]`;
    return `list[${isSchema(schema['items']) ? this.annotation(schema['items'], `${hint}Item`, scope) : ANY}]`;
  }

  #ref(ref: string, hint: string, scope: SchemaDefs | null): string {
    const found = resolveRef(ref, scope);
    if (found === null) return ANY;
    const { name, target, defs, key } = found;
    if (isSchema(target['properties'])) return this.#model({ title: name, ...target }, key, hint, defs);
    if (this.#expanding.has(key)) return ANY; // a recursive alias that is no class
    this.#expanding.add(key);
    try {
      return this.annotation(target, className(name), defs);
    } finally {
      this.#expanding.delete(key);
    }
  }

  #model(schema: Schema, key: string, hint: string, scope: SchemaDefs | null): string {
    const known = this.#byKey.get(key);
    if (known !== undefined) return known;
    const title = typeof schema['title'] === 'string' && schema['title'] !== '' ? schema['title'] : null;
    const name = this.#scope.take(className(title ?? hint));
    this.#byKey.set(key, name);
    if (title !== null && !this.#byTitle.has(title)) this.#byTitle.set(title, name);
    const description = schema['description'];
    const model: Model = { name, doc: typeof description === 'string' && description.trim() !== '' ? description.trim() : null, fields: [], kwOnly: false };
    this.models.push(model); // before its fields: a field may refer back to it
    const required = new Set(Array.isArray(schema['required']) ? schema['required'].filter((r): r is string => typeof r === 'string') : []);
    const fieldNames = new NameScope();
    let defaulted = false;
    for (const [jsonKey, property] of Object.entries(schema['properties'] as Schema)) {
      const wanted = identifier(jsonKey, 'f_');
      const fieldName = fieldNames.take(FIELD_SHADOWS.has(wanted) ? `${wanted}_` : wanted);
      let type = this.annotation(property, `${name}${className(jsonKey)}`, scope);
      let value: ModelField['default'] = null;
      let omitWhenNone = false;
      if (isSchema(property) && Object.hasOwn(property, 'default')) {
        const given = property['default'];
        value = { literal: pyLiteral(given), factory: typeof given === 'object' && given !== null };
      } else if (!required.has(jsonKey)) {
        type = optional(type);
        value = { literal: 'None', factory: false };
        omitWhenNone = true;
      }
      if (value === null && defaulted) model.kwOnly = true;
      defaulted ||= value !== null;
      model.fields.push({ name: fieldName, key: jsonKey, type, default: value, omitWhenNone });
    }
    return name;
  }
}

/** `X | None`, unless X already takes None. */
export function optional(type: string): string {
  return union([type, 'None']);
}

/** The members of a union annotation, split at the top level only (`dict[str, int | None] | None` has two). */
export function unionMembers(type: string): string[] {
  const members: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < type.length; i++) {
    const c = type[i];
    if (c === '[') depth++;
    else if (c === ']') depth--;
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

/** Index of the quote that closes the JSON string literal opened at `open`. */
function closingQuote(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return text.length;
}

export function union(members: string[]): string {
  if (members.includes(ANY) || members.length === 0) return ANY;
  const unique = [...new Set(members.flatMap(unionMembers))];
  const some = unique.filter((member) => member !== 'None');
  if (some.length === 0) return 'None';
  return unique.includes('None') ? `${some.join(' | ')} | None` : some.join(' | ');
}

/** `typing.Literal[...]` of scalar values; None goes outside (`Literal["a"] | None`). */
function literal(values: readonly unknown[]): string {
  const scalar = values.filter((v) => v !== null);
  if (!scalar.every((v) => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isInteger(v)))) return ANY;
  if (scalar.length === 0) return 'None';
  const text = `typing.Literal[${scalar.map(pyLiteral).join(', ')}]`;
  return scalar.length < values.length ? `${text} | None` : text;
}
