/**
 * JSON Schema → Python annotations: the walk is svc/plugin's `SchemaTypes`;
 * this is how Python spells what it finds. Object schemas with properties
 * become generated dataclasses; everything else maps onto builtins and `typing`:
 *
 *   string → str (base64 → bytes), integer → int, number → float, boolean → bool,
 *   null → None, array → list[T] / tuple[A, B], object without properties →
 *   dict[str, T], anyOf/oneOf/type lists → A | B, enum/const → Literal[...],
 *   {} and anything unknown → typing.Any.
 */
import { isSchema, SchemaTypes, unionMembers, unionOf, type SchemaModel, type TypeSpelling } from 'svc/plugin';
import { className, identifier, NameScope, pyLiteral } from './names.js';

/** Re-exported for the renderers, which read schemas and annotations too. */
export { isSchema, unionMembers };

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
  readonly fields: readonly ModelField[];
  /** A required field follows a defaulted one: the dataclass takes keywords only. */
  readonly kwOnly: boolean;
}

export const ANY = 'typing.Any';
/** Field names that would break the class: `self` (its __init__), and names its annotations read. */
const FIELD_SHADOWS = new Set(['self', '_dc', 'typing', 'str', 'int', 'float', 'bool', 'bytes', 'list', 'dict', 'tuple']);
const SCALARS = { integer: 'int', number: 'float', boolean: 'bool' } as const;

const PYTHON: TypeSpelling<Model> = {
  unknown: ANY,
  null: 'None',
  typeName: className,
  scalar: (type, schema) =>
    type !== 'string'
      ? SCALARS[type]
      : schema.contentEncoding === 'base64' || schema.contentMediaType === 'application/octet-stream'
        ? 'bytes'
        : 'str',
  array: (item) => `list[${item}]`,
  tuple: (items) => `tuple[${items.join(', ')}]`,
  record: (value) => `dict[str, ${value}]`,
  literal,
  model: dataclass,
};

/** `type()`: the annotation of a schema; `models`: every dataclass to generate. `scope` holds the module's other names. */
export class TypeMapper extends SchemaTypes<Model> {
  constructor(scope: NameScope) {
    super(PYTHON, scope);
  }
}

function dataclass(model: SchemaModel): Model {
  const fieldNames = new NameScope();
  let defaulted = false;
  let kwOnly = false;
  const fields = model.properties.map(({ key, type, required, schema }): ModelField => {
    const wanted = identifier(key, 'f_');
    const name = fieldNames.take(FIELD_SHADOWS.has(wanted) ? `${wanted}_` : wanted);
    if (isSchema(schema) && Object.hasOwn(schema, 'default')) {
      const given = schema.default;
      defaulted = true;
      return {
        name,
        key,
        type,
        default: { literal: pyLiteral(given), factory: typeof given === 'object' && given !== null },
        omitWhenNone: false,
      };
    }
    if (!required) {
      defaulted = true;
      return { name, key, type: optional(type), default: { literal: 'None', factory: false }, omitWhenNone: true };
    }
    kwOnly ||= defaulted;
    return { name, key, type, default: null, omitWhenNone: false };
  });
  return { name: model.name, doc: model.doc, fields, kwOnly };
}

/** `X | None`, unless X already takes None. */
export function optional(type: string): string {
  return union([type, 'None']);
}

export function union(members: readonly string[]): string {
  return unionOf(members, PYTHON);
}

/** `typing.Literal[...]` of scalar values; None goes outside (`Literal["a"] | None`). */
function literal(values: readonly unknown[]): string {
  const scalar = values.filter((v) => v !== null);
  if (!scalar.every((v) => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isInteger(v)))) return ANY;
  if (scalar.length === 0) return 'None';
  const text = `typing.Literal[${scalar.map(pyLiteral).join(', ')}]`;
  return scalar.length < values.length ? `${text} | None` : text;
}

/** `expression` (Any to type checkers) as `annotation`: pyright's strict mode rejects a cast to Any as unnecessary. */
export function typedAs(annotation: string, expression: string): string {
  return annotation === ANY ? expression : `typing.cast(${JSON.stringify(annotation)}, ${expression})`;
}
