/**
 * Reading the JSON Schemas of an app interface (`parameters`, `returns`, an
 * ASGI operation's schemas), for client exporters: what every exporter's
 * schema-to-type mapper needs whatever its language. Part of `svc/plugin`.
 */

/** A JSON Schema object (any JSON object; `true`/`false` schemas are not objects). */
export type Schema = Readonly<Record<string, unknown>>;

/** The `$defs` (or `definitions`) in scope at one place of a schema, innermost first. */
export interface SchemaDefs {
  /** Identifies these definitions (their canonical JSON): equal definitions, equal id. */
  readonly id: string;
  readonly defs: Schema;
  readonly parent: SchemaDefs | null;
}

export function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON with object keys sorted: equal schemas give equal text. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isSchema(value))
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** The definitions in scope inside `schema`: its own `$defs`/`definitions` over `parent`'s. */
export function withDefs(schema: Schema, parent: SchemaDefs | null): SchemaDefs | null {
  const defs = schema.$defs ?? schema.definitions;
  return isSchema(defs) ? { id: canonical(defs), defs, parent } : parent;
}

/** Named schemas that `#/$defs/<name>` refers to from outside them (an ASGI app's `api.definitions`); `id` tells apart equal names of different sets. */
export function definitionsScope(id: string, defs: Schema): SchemaDefs {
  return { id, defs, parent: null };
}

export interface ResolvedRef {
  /** The definition's name (`~1` and `~0` unescaped). */
  readonly name: string;
  readonly target: Schema;
  /** The definitions it was found in: its own `$ref`s resolve from there. */
  readonly defs: SchemaDefs;
  /** Identifies the definition: the same one reached twice has the same key (for recursion). */
  readonly key: string;
}

/** The definition a local `$ref` (`#/$defs/<name>` or `#/definitions/<name>`) names, from the innermost scope that has it; null when none does. */
export function resolveRef(ref: string, scope: SchemaDefs | null): ResolvedRef | null {
  const match = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref);
  if (match === null) return null;
  const name = match[1]!.replace(/~1/g, '/').replace(/~0/g, '~');
  for (let defs = scope; defs !== null; defs = defs.parent) {
    const target = defs.defs[name];
    if (isSchema(target)) return { name, target, defs, key: `ref:${defs.id}:${name}` };
  }
  return null;
}
