/**
 * An ASGI app's operations (its OpenAPI description, read at deploy: the
 * interface's `api`) as methods of its object: `web.get_todo(7) -> Todo`.
 * Path parameters are positional, then the body; query and header
 * parameters keyword-only (the optional ones default to None, left out of
 * the request). The answer is decoded into the result's type; an error
 * answer raises svc's typed exception (`_rt.Asgi._operation`).
 */
import { definitionsScope, isJsonMediaType, type InterfaceApi, type InterfaceOperation, type SchemaDefs } from 'svc/plugin';
import { identifier, NameScope, pyDocstring, pyString } from './names.js';
import { ANY, optional, typedAs, type TypeMapper } from './schema-types.js';

/** What the object has already (runtime.py's Workload and Asgi): no method may hide one of them. */
const TAKEN = ['request', 'connect', 'app', 'name', 'kind', 'path', 'url', 'authorized', 'self'];

export interface RenderedOperations {
  /** The methods, indented for the class body. */
  readonly methods: string[];
  /** The method names, in the document's order. */
  readonly names: string[];
}

export function renderOperations(api: InterfaceApi, mapper: TypeMapper, hint: string, where: string): RenderedOperations {
  const scope = new NameScope(TAKEN);
  const defs = definitionsScope(`api:${hint}`, api.definitions);
  const names: string[] = [];
  const methods = api.operations.map((operation) => {
    const name = scope.take(identifier(operation.name, 'op_'));
    names.push(name);
    return renderOperation(operation, name, mapper, defs, `${hint}${pascal(name)}`, where);
  });
  return { methods, names };
}

interface PyParameter {
  readonly name: string;
  readonly text: string;
  readonly required: boolean;
}

function renderOperation(
  operation: InterfaceOperation,
  name: string,
  mapper: TypeMapper,
  defs: SchemaDefs,
  hint: string,
  where: string,
): string {
  const locals = new NameScope();
  const self = 'self';
  locals.take(self);
  const positional: PyParameter[] = [];
  const keyword: PyParameter[] = [];
  const groups: Record<'path' | 'query' | 'header', string[]> = { path: [], query: [], header: [] };
  for (const parameter of operation.parameters) {
    // Header names are case-insensitive: `X-Token` is `x_token`.
    const python = locals.take(identifier(parameter.in === 'header' ? parameter.name.toLowerCase() : parameter.name, 'p_'));
    const type = mapper.type(parameter.schema, `${hint}${pascal(python)}`, defs);
    groups[parameter.in].push(`${pyString(parameter.name)}: ${python}`);
    const required = parameter.in === 'path' || parameter.required;
    const text = required ? `${python}: ${type}` : `${python}: ${optional(type)} = None`;
    (parameter.in === 'path' ? positional : keyword).push({ name: python, text, required });
  }
  const body = operation.body === null ? null : bodyOf(operation.body, locals.take('body'), mapper, defs, hint);
  if (body !== null) positional.push(body.parameter);
  const result = resultOf(operation, mapper, defs, hint);
  // Required keyword-only ones first: the signature reads better, and Python allows any order after `*`.
  const keywords = [...keyword.filter((p) => p.required), ...keyword.filter((p) => !p.required)];
  const params = [self, ...positional.map((p) => p.text), ...(keywords.length > 0 ? ['*', ...keywords.map((p) => p.text)] : [])].join(', ');
  const call = [
    pyString(operation.method),
    pyString(operation.path),
    `path={${groups.path.join(', ')}}`,
    `query={${groups.query.join(', ')}}`,
    `headers={${groups.header.join(', ')}}`,
    ...(body === null ? [] : [`body=${body.name}`, `content_type=${pyString(body.contentType)}`]),
    `result=${pyString(result.kind)}`,
    ...(result.kind === 'json' ? [`returns=${result.annotation}`] : []),
  ].join(', ');
  const invoke = `${self}._operation(${call})`;
  return [
    `    def ${name}(${params}) -> ${result.annotation}:`,
    pyDocstring(docOf(operation, result, where), '        '),
    result.kind === 'none' ? `        ${invoke}` : `        return ${typedAs(result.annotation, invoke)}`,
  ].join('\n');
}

function bodyOf(
  body: NonNullable<InterfaceOperation['body']>,
  name: string,
  mapper: TypeMapper,
  defs: SchemaDefs,
  hint: string,
): { name: string; contentType: string; parameter: PyParameter } {
  const json = isJsonMediaType(body.contentType);
  // A form is sent from a dict, anything else (a file, text) as it is.
  const type = json
    ? mapper.type(body.schema, `${hint}Body`, defs)
    : body.contentType === 'application/x-www-form-urlencoded'
      ? 'typing.Mapping[str, str]'
      : 'bytes | str';
  const text = body.required ? `${name}: ${type}` : `${name}: ${optional(type)} = None`;
  return { name, contentType: body.contentType, parameter: { name, text, required: body.required } };
}

interface Result {
  /** `json`: decoded into `annotation`; `none`: no body; `response`: the response as it came. */
  readonly kind: 'json' | 'none' | 'response';
  readonly annotation: string;
}

function resultOf(operation: InterfaceOperation, mapper: TypeMapper, defs: SchemaDefs, hint: string): Result {
  const { result } = operation;
  if (result.schema !== null) return { kind: 'json', annotation: mapper.type(result.schema, `${hint}Result`, defs) };
  if (result.contentType === null && (result.status === 204 || result.status === 205)) return { kind: 'none', annotation: 'None' };
  return { kind: 'response', annotation: '_rt.Response' };
}

function docOf(operation: InterfaceOperation, result: Result, where: string): string {
  const about = [operation.summary, operation.description].filter((text): text is string => text !== null).join('\n\n');
  const answer =
    result.kind === 'json'
      ? result.annotation === ANY
        ? 'the JSON answer'
        : `the answer as ${result.annotation}`
      : result.kind === 'none'
        ? 'nothing (no body)'
        : 'the response as it came';
  const call = [
    `Calls ${operation.method} ${operation.path} of ${where} and returns ${answer}.`,
    "An error answer raises svc's typed exception (svc.NotFoundError, svc.InvalidRequestError, ...).",
    ...(operation.deprecated ? ['Deprecated by the app.'] : []),
  ].join('\n');
  return about === '' ? call : `${about}\n\n${call}`;
}

/** `get_todo` → `GetTodo`. */
function pascal(text: string): string {
  return text.replace(/(^|_)([a-z0-9])/g, (_, __, c: string) => c.toUpperCase());
}
