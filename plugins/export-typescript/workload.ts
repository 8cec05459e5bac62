/**
 * What every workload renderer shares: the names a workload gets, what a
 * renderer returns (its declarations for `index.d.ts`, the expression that
 * builds its object in `index.js`), and arguments interfaces from an object
 * schema (an endpoint's parameters, an ASGI operation's parameters and body).
 */
import { isSchema, type InterfaceWorkload, type SchemaDefs } from 'svc/plugin';
import { jsDoc, type NameScope, propertyKey } from './names.js';
import type { TypeMapper } from './schema-types.js';

export interface WorkloadNames {
  readonly app: string;
  /** The exported object and the client's property (`greet`, `realtimeChat`, `class_`). */
  readonly object: string;
  /** Its interface (`GreetEndpoint`). */
  readonly type: string;
  /** Base name of the types made for it (`Greet`): `GreetArguments`, `GreetResult`. */
  readonly hint: string;
  /** Hands out the module's type names. */
  readonly scope: NameScope;
}

export interface RenderedWorkload {
  /** `index.d.ts` lines: the workload's interface and the types only it uses. */
  readonly declarations: readonly string[];
  /** The `index.js` expression that builds the object, with `options` in scope. */
  readonly construct: string;
}

/** `{"app": …, "name": …, "kind": …, "url": …, "path": …, "authorized": …}` as a JS literal. */
export function infoLiteral(workload: InterfaceWorkload, app: string): string {
  const { name, kind, url, path, authorized } = workload;
  return JSON.stringify({ app, name, kind, url, path, authorized });
}

export interface ArgumentsType {
  /** The `args` parameter (`args: GreetArguments`, `args?: HelloArguments`), or '' when there is nothing to pass. */
  readonly parameter: string;
  /** The interface, when there is one. */
  readonly declaration: readonly string[];
}

export interface ArgumentProperty {
  readonly key: string;
  readonly type: string;
  readonly optional: boolean;
  readonly doc: string | null;
}

/** An arguments interface of these properties; `extra` adds an index signature (`**kwargs`). */
export function argumentsType(name: string, doc: string, properties: readonly ArgumentProperty[], extra: boolean): ArgumentsType {
  if (properties.length === 0 && !extra) return { parameter: '', declaration: [] };
  const optional = properties.every((p) => p.optional);
  return {
    parameter: `args${optional ? '?' : ''}: ${name}`,
    declaration: [
      ...jsDoc(doc),
      `export interface ${name} {`,
      ...properties.flatMap((p) => [...jsDoc(p.doc, '  '), `  ${propertyKey(p.key)}${p.optional ? '?' : ''}: ${p.type};`]),
      ...(extra ? ['  /** Further arguments the function takes by name (**kwargs). */', '  [key: string]: unknown;'] : []),
      '}',
      '',
    ],
  };
}

/** The properties of a function's `parameters` schema: optional when not required (or defaulted). */
export function schemaProperties(schema: unknown, mapper: TypeMapper, hint: string, defs: SchemaDefs | null = null): ArgumentProperty[] {
  if (!isSchema(schema) || !isSchema(schema.properties)) return [];
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return Object.entries(schema.properties).map(([key, property]) => {
    const defaulted = isSchema(property) && Object.hasOwn(property, 'default');
    const description = isSchema(property) && typeof property.description === 'string' ? property.description : null;
    const doc = defaulted
      ? [description, `Default: ${JSON.stringify(property.default)}.`].filter((line) => line !== null).join('\n')
      : description;
    return { key, type: mapper.type(property, `${hint}${capitalize(key)}`, defs), optional: !required.has(key) || defaulted, doc };
  });
}

/** The user's doc, a blank line, then what the generated method does. */
export function withDoc(doc: string | null, text: string): string {
  return doc === null ? text : `${doc}\n\n${text}`;
}

function capitalize(key: string): string {
  return key
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== '')
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
}
