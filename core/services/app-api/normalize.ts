/**
 * An ASGI app's OpenAPI 3.0/3.1 description → the interface's `api`: one
 * InterfaceOperation per method of each path, in the document's order, with
 * its parameters (`$ref`s to components resolved, cookies left out), its
 * JSON body and its first 2xx answer; the schemas as plain JSON Schema
 * (openapi-refs.ts) and `components.schemas` as `definitions`.
 *
 * The document comes from user code: whatever cannot be understood (a
 * broken reference, a parameter without a name, too many operations) is
 * skipped and said in `skipped`, never thrown.
 */
import type {
  InterfaceApi,
  InterfaceOperation,
  InterfaceOperationBody,
  InterfaceOperationParameter,
  InterfaceOperationResult,
} from '../../infra/plugin/types.js';
import { componentName, isObject, plainSchema, type Note } from './openapi-refs.js';
import { isJsonMediaType } from '../../model/media-type.js';
import { operationName } from './operation-names.js';
import { NameScope } from '../../infra/plugin/name-scope.js';
import type { ApiCapture } from './types.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;
/** More operations than any real app has; a document with more is cut there. */
export const MAX_OPERATIONS = 1000;
/** `skipped` says this many things at most (and how many more). */
const MAX_NOTES = 50;

export interface NormalizedApi {
  readonly api: InterfaceApi;
  /** What was left out, one line each (`GET /items: …`). */
  readonly skipped: readonly string[];
}

/** Why a document is no OpenAPI 3.x description at all; null when it is one. */
export function notOpenApi(document: unknown): string | null {
  if (!isObject(document)) return 'it is not a JSON object';
  const version = document.openapi;
  if (typeof version !== 'string')
    return typeof document.swagger === 'string'
      ? `it is Swagger ${String(document.swagger).slice(0, 20)}, not OpenAPI 3.x`
      : 'it has no "openapi" version';
  if (!/^3\.[01]\./.test(`${version}.`)) return `it is OpenAPI ${version.slice(0, 20)}, not 3.0 or 3.1`;
  return null;
}

export function normalizeApi(capture: Omit<ApiCapture, 'version'>): NormalizedApi {
  const notes: string[] = [];
  const note: Note = (text) => void notes.push(text);
  const document = capture.document;
  const components = isObject(document.components) ? document.components : {};
  const schemas = isObject(components.schemas) ? components.schemas : {};
  const definitions = Object.fromEntries(
    Object.entries(schemas).map(([name, schema]) => [name, plainSchema(schema, `components.schemas.${name}`, note)]),
  );
  const operations: InterfaceOperation[] = [];
  const names = new NameScope();
  const paths = isObject(document.paths) ? document.paths : {};
  eachPath: for (const [path, item] of Object.entries(paths)) {
    if (!path.startsWith('/') || !isObject(item)) {
      note(`path ${JSON.stringify(path).slice(0, 120)}: not a path with its operations`);
      continue;
    }
    if (Object.hasOwn(item, '$ref')) {
      note(`path ${path}: a $ref path item is not followed`);
      continue;
    }
    for (const [key, operation] of Object.entries(item)) {
      const method = METHODS.find((m) => m === key);
      if (method === undefined || !isObject(operation)) continue;
      if (operations.length === MAX_OPERATIONS) {
        note(`more than ${MAX_OPERATIONS} operations: ${method.toUpperCase()} ${path} and the ones after it are left out`);
        break eachPath;
      }
      operations.push(describeOperation({ components, names, note }, path, method, item, operation));
    }
  }
  const skipped = notes.length > MAX_NOTES ? [...notes.slice(0, MAX_NOTES), `and ${notes.length - MAX_NOTES} more`] : notes;
  return { api: { openapi: document, source: capture.source, capturedAt: capture.capturedAt, operations, definitions }, skipped };
}

interface Context {
  readonly components: Record<string, unknown>;
  readonly names: NameScope;
  readonly note: Note;
}

function describeOperation(
  context: Context,
  path: string,
  method: string,
  item: Record<string, unknown>,
  operation: Record<string, unknown>,
): InterfaceOperation {
  const where = `${method.toUpperCase()} ${path}`;
  const operationId = typeof operation.operationId === 'string' && operation.operationId !== '' ? operation.operationId : null;
  return {
    name: context.names.take(operationName(operationId, method, path)),
    operationId,
    method: method.toUpperCase(),
    path,
    summary: text(operation.summary),
    description: text(operation.description),
    deprecated: operation.deprecated === true,
    parameters: parametersOf(context, where, path, item.parameters, operation.parameters),
    body: bodyOf(context, where, operation.requestBody),
    result: resultOf(context, where, operation.responses),
  };
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

/** A `$ref` to `#/components/<section>/X`, followed (a chain of them too, never in a circle); anything else as it is. */
function resolve(context: Context, value: unknown, section: string, where: string): Record<string, unknown> | null {
  const seen = new Set<string>();
  let current = value;
  while (isObject(current) && Object.hasOwn(current, '$ref')) {
    const name = componentName(current.$ref, section);
    const pool = context.components[section];
    if (name === null || seen.has(name) || !isObject(pool) || !Object.hasOwn(pool, name)) {
      const why = name === null ? `is not to #/components/${section}` : seen.has(name) ? 'refers back to itself' : 'names nothing';
      context.note(`${where}: the reference ${JSON.stringify(String(current.$ref)).slice(0, 120)} ${why}; left out`);
      return null;
    }
    seen.add(name);
    current = pool[name];
  }
  return isObject(current) ? current : null;
}

function parametersOf(context: Context, where: string, path: string, shared: unknown, own: unknown): InterfaceOperationParameter[] {
  const byKey = new Map<string, InterfaceOperationParameter>();
  // The path item's parameters apply to each of its operations; the operation's own win (same name and place).
  for (const list of [shared, own]) {
    if (list === undefined) continue;
    if (!Array.isArray(list)) {
      context.note(`${where}: parameters is not a list; left out`);
      continue;
    }
    for (const given of list) {
      const parameter = parameterOf(context, where, given);
      if (parameter !== null) byKey.set(`${parameter.in}:${parameter.name}`, parameter);
    }
  }
  const placeholders = [...path.matchAll(/\{([^{}]+)\}/g)].map((match) => match[1]!);
  const all = [...byKey.values()];
  for (const parameter of all.filter((p) => p.in === 'path' && !placeholders.includes(p.name))) {
    context.note(`${where}: the path parameter ${parameter.name} is not in the path; left out`);
  }
  // Every placeholder is a parameter, described or not (a Starlette route may describe none).
  const inPath = placeholders.map(
    (name) => byKey.get(`path:${name}`) ?? { name, in: 'path' as const, required: true, schema: { type: 'string' }, description: null },
  );
  return [
    ...new Map(inPath.map((p) => [p.name, p])).values(),
    ...all.filter((p) => p.in === 'query'),
    ...all.filter((p) => p.in === 'header'),
  ];
}

function parameterOf(context: Context, where: string, given: unknown): InterfaceOperationParameter | null {
  const parameter = resolve(context, given, 'parameters', where);
  if (parameter === null) return null;
  const { name } = parameter;
  const place = parameter.in;
  if (typeof name !== 'string' || name === '') {
    context.note(`${where}: a parameter without a name; left out`);
    return null;
  }
  if (place === 'cookie') return null;
  if (place !== 'path' && place !== 'query' && place !== 'header') {
    context.note(`${where}: the parameter ${name.slice(0, 80)} is in ${JSON.stringify(place)}, not path, query or header; left out`);
    return null;
  }
  // A parameter described by `content` (a JSON-encoded query value) has its schema there.
  const content = isObject(parameter.content) ? Object.values(parameter.content).find(isObject) : undefined;
  const schema = parameter.schema ?? content?.schema;
  return {
    name,
    in: place,
    required: place === 'path' || parameter.required === true,
    schema: plainSchema(schema, `${where} parameter ${name}`, context.note),
    description: text(parameter.description),
  };
}

function bodyOf(context: Context, where: string, given: unknown): InterfaceOperationBody | null {
  if (given === undefined) return null;
  const body = resolve(context, given, 'requestBodies', `${where} request body`);
  if (body === null) return null;
  const media = mediaOf(body.content);
  if (media === null) {
    context.note(`${where}: the request body lists no content type; left out`);
    return null;
  }
  return {
    contentType: media.type,
    required: body.required === true,
    schema: plainSchema(media.schema, `${where} request body`, context.note),
  };
}

/** `application/json` (or another JSON type) when listed, else the first; null when none is. */
function mediaOf(content: unknown): { type: string; schema: unknown; json: boolean } | null {
  if (!isObject(content)) return null;
  const types = Object.keys(content);
  const type = types.find((t) => t === 'application/json') ?? types.find(isJsonMediaType) ?? types[0];
  if (type === undefined) return null;
  const media = content[type];
  return { type, schema: isObject(media) ? media.schema : undefined, json: isJsonMediaType(type) };
}

function resultOf(context: Context, where: string, responses: unknown): InterfaceOperationResult {
  const listed = isObject(responses) ? Object.keys(responses) : [];
  const key = listed.find((status) => /^2\d\d$/.test(status)) ?? listed.find((status) => /^2XX$/i.test(status));
  if (key === undefined) return { status: 200, contentType: 'application/json', schema: {} };
  const status = /^2\d\d$/.test(key) ? Number(key) : 200;
  const response = resolve(context, (responses as Record<string, unknown>)[key], 'responses', `${where} response ${key}`);
  const media = response === null ? null : mediaOf(response.content);
  if (media === null) return { status, contentType: null, schema: null };
  return {
    status,
    contentType: media.type,
    schema: media.json ? plainSchema(media.schema, `${where} response ${key}`, context.note) : null,
  };
}
