/**
 * A function's parameters, rebuilt from its `parameters` schema: the same
 * names, order, annotations and defaults. The schema keeps no parameter
 * kinds, so parameters are positional-or-keyword until a required one
 * follows a defaulted one (only keyword-only parameters can), which starts
 * the keyword-only ones; `**kwargs` comes back from `additionalProperties`.
 * A default with no JSON form is `_rt.OMITTED`: left out of the call, so the
 * function's own default applies.
 */
import { identifier, NameScope, pyLiteral, pyString } from './names.js';
import { ANY, isSchema, type TypeMapper } from './schema-types.js';

export interface Parameter {
  /** The Python name (the JSON key, unless that is no identifier). */
  readonly name: string;
  /** The JSON key the argument is sent under. */
  readonly key: string;
  readonly type: string;
  /** Python source of the default; null for a required parameter. */
  readonly default: string | null;
  readonly keywordOnly: boolean;
}

export interface Signature {
  readonly parameters: readonly Parameter[];
  /** `**kwargs`, when the function takes them. */
  readonly kwargs: { readonly name: string; readonly type: string } | null;
  /** JSON keys of list, set and `tuple[T, ...]` parameters: a GET sends them as the key repeated. */
  readonly arrays: readonly string[];
}

export function signatureOf(schema: unknown, mapper: TypeMapper, hint: string): Signature {
  if (!isSchema(schema)) return { parameters: [], kwargs: null, arrays: [] };
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const names = new NameScope();
  const parameters: Parameter[] = [];
  const arrays: string[] = [];
  let keywordOnly = false;
  for (const [key, property] of Object.entries(properties)) {
    const name = names.take(identifier(key, 'p_'));
    const type = mapper.type(property, `${hint}${capitalize(name)}`);
    let value: string | null = null;
    if (isSchema(property) && Object.hasOwn(property, 'default')) value = defaultSource(property.default, type);
    else if (!required.has(key)) value = '_rt.OMITTED';
    if (value === null && parameters.some((p) => p.default !== null)) keywordOnly = true;
    parameters.push({ name, key, type, default: value, keywordOnly });
    if (isSchema(property) && property.type === 'array' && !Array.isArray(property.prefixItems)) arrays.push(key);
  }
  const extra = schema.additionalProperties;
  const kwargs =
    extra === undefined || extra === false
      ? null
      : { name: names.take('kwargs'), type: isSchema(extra) ? mapper.type(extra, `${hint}Extra`) : ANY };
  return { parameters, kwargs, arrays };
}

/** `self, name: str, excited: bool = False` (with `*` before keyword-only ones); `receiver` first when given. */
export function parameterList(signature: Signature, receiver: string | null): string {
  const parts: string[] = receiver === null ? [] : [receiver];
  let star = false;
  for (const p of signature.parameters) {
    if (p.keywordOnly && !star) {
      parts.push('*');
      star = true;
    }
    parts.push(`${p.name}: ${p.type}${p.default === null ? '' : ` = ${p.default}`}`);
  }
  if (signature.kwargs !== null) parts.push(`**${signature.kwargs.name}: ${signature.kwargs.type}`);
  return parts.join(', ');
}

/** `{"name": name, "excited": excited, **kwargs}`: the call's arguments by JSON key. */
export function argumentsDict(signature: Signature): string {
  const entries = signature.parameters.map((p) => `${pyString(p.key)}: ${p.name}`);
  if (signature.kwargs !== null) entries.push(`**${signature.kwargs.name}`);
  return `{${entries.join(', ')}}`;
}

/** A receiver name no parameter takes (`self`, else `self_`, …). */
export function receiverFor(signature: Signature): string {
  const taken = new Set([...signature.parameters.map((p) => p.name), signature.kwargs?.name]);
  // Another name than self must start with _ for strict checkers (pyright's reportSelfClsParameterName).
  let name = taken.has('self') ? '_self' : 'self';
  while (taken.has(name)) name = `${name}_`;
  return name;
}

/** The default as a literal; a JSON array for a `tuple[...]` parameter is written as a tuple, as the function has it. */
function defaultSource(value: unknown, type: string): string {
  if (Array.isArray(value) && type.startsWith('tuple['))
    return value.length === 1 ? `(${pyLiteral(value[0])},)` : `(${value.map(pyLiteral).join(', ')})`;
  return pyLiteral(value);
}

function capitalize(text: string): string {
  return text.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());
}
