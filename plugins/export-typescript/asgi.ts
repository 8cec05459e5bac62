/**
 * ASGI apps: the generic `request(method, path, init)` and `connect(path)` for
 * every route, and, when the app published an OpenAPI description at deploy
 * time (`workload.api`), one typed method per operation: `api.getTodo({
 * todo_id: 1 })` resolving to a `Todo`, path, query and header parameters by
 * their names on the wire, the request body as `body`, an error answer thrown
 * as SvcError (its body in `details`).
 */
import { definitionsScope, isJsonMediaType, type InterfaceApi, type InterfaceOperation, type InterfaceWorkload } from 'svc/plugin';
import { camelName, jsDoc, NameScope, typeName } from './names.js';
import type { TypeMapper } from './schema-types.js';
import { argumentsType, infoLiteral, type ArgumentProperty, type RenderedWorkload, type WorkloadNames } from './workload.js';

/** Names an operation method must leave to the object: its own members and Object's. */
const MEMBERS = [
  'request',
  'connect',
  'withOptions',
  'app',
  'name',
  'kind',
  'url',
  'path',
  'authorized',
  'constructor',
  'toString',
  'toLocaleString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
];

/** What the runtime needs of one operation (runtime/runtime.js `Asgi#_operation`). */
interface OperationSpec {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  /** `key`: the property of the arguments object; `name`: the name on the wire. */
  readonly parameters: readonly { readonly key: string; readonly name: string; readonly in: string }[];
  readonly body: { readonly key: string; readonly contentType: string; readonly json: boolean } | null;
  readonly result: 'none' | 'json' | 'text' | 'bytes';
}

export function renderAsgi(workload: InterfaceWorkload, names: WorkloadNames, mapper: TypeMapper): RenderedWorkload {
  const api = workload.api;
  const methods = new NameScope(MEMBERS);
  const rendered = (api?.operations ?? []).map((operation) =>
    renderOperation(operation, api!, methods.take(camelName(operation.name, 'op')), workload, names, mapper),
  );
  const about = `The ASGI app ${workload.name} of ${names.app}: every route of the app, under its URL.\n\nrequest(method, path, init) sends one HTTP request and resolves to the response; connect(path) opens one of its WebSocket routes.`;
  const typed =
    api === null
      ? 'The app published no OpenAPI description when it was deployed, so it has no typed methods.'
      : `One typed method per operation of its OpenAPI description (${api.source}, read at ${api.capturedAt}).`;
  return {
    declarations: [
      ...rendered.flatMap((r) => r.declaration),
      ...jsDoc(`${workload.doc === null ? '' : `${workload.doc}\n\n`}${about}\n${typed}`),
      `export interface ${names.type} extends WorkloadInfo<"asgi">, AsgiApp {`,
      ...rendered.flatMap((r) => r.method),
      `  withOptions(options: ClientOptions): ${names.type};`,
      '}',
      '',
    ],
    construct: `new Asgi(${infoLiteral(workload, names.app)}, options, ${JSON.stringify({ operations: rendered.map((r) => r.spec) })})`,
  };
}

function renderOperation(
  operation: InterfaceOperation,
  api: InterfaceApi,
  method: string,
  workload: InterfaceWorkload,
  names: WorkloadNames,
  mapper: TypeMapper,
) {
  const defs = definitionsScope(`api:${workload.name}`, api.definitions);
  const hint = `${names.hint}${typeName(method)}`;
  const keys = new NameScope();
  const properties: ArgumentProperty[] = operation.parameters.map((p) => ({
    key: keys.take(p.name),
    type: mapper.type(p.schema, `${hint}${typeName(p.name)}`, defs),
    optional: !p.required && p.in !== 'path',
    doc: [p.description, `The ${p.in} parameter ${p.name}.`].filter((line) => line !== null).join('\n'),
  }));
  const body = operation.body;
  const json = body !== null && isJsonMediaType(body.contentType);
  let bodyKey: string | null = null;
  if (body !== null) {
    bodyKey = keys.take('body');
    const type = json ? mapper.type(body.schema, `${hint}Body`, defs) : 'string | Uint8Array';
    properties.push({ key: bodyKey, type, optional: !body.required, doc: `The request body (${body.contentType}).` });
  }
  const result = operation.result;
  const kind: OperationSpec['result'] =
    result.contentType === null || result.status === 204
      ? 'none'
      : result.schema !== null
        ? 'json'
        : result.contentType.startsWith('text/')
          ? 'text'
          : 'bytes';
  const resultType = { none: 'void', json: mapper.type(result.schema, `${hint}Result`, defs), text: 'string', bytes: 'Uint8Array' }[kind];
  const argumentsName = properties.length > 0 ? names.scope.take(`${hint}Arguments`) : '';
  const args = argumentsType(
    argumentsName,
    `The arguments of ${method}(): ${operation.method} ${operation.path}, its parameters by their names on the wire.`,
    properties,
    false,
  );
  const doc = [
    operation.summary,
    operation.description,
    `Sends ${operation.method} ${operation.path} to ${workload.name} and resolves to its ${result.status} answer${kind === 'json' ? ' decoded from JSON' : ''}; an error answer is thrown as SvcError (the code of its status, its body in details).`,
    ...(operation.deprecated ? ['@deprecated The app marks this operation deprecated.'] : []),
  ]
    .filter((line): line is string => line !== null && line.trim() !== '')
    .join('\n\n');
  const spec: OperationSpec = {
    name: method,
    method: operation.method,
    path: operation.path,
    parameters: operation.parameters.map((p, i) => ({ key: properties[i]!.key, name: p.name, in: p.in })),
    body: body === null ? null : { key: bodyKey!, contentType: body.contentType, json },
    result: kind,
  };
  return { declaration: args.declaration, method: [...jsDoc(doc, '  '), `  ${method}(${args.parameter}): Promise<${resultType}>;`], spec };
}
