/**
 * Endpoints and functions. An endpoint object has `request(args)` with the
 * function's parameters as one typed arguments object, resolving to its typed
 * answer (an async iterable of items for a generator, a Uint8Array for bytes),
 * `raw(args)` for the answer as it came, and `spawn(args)` for the same request
 * answered later (`Prefer: respond-async`: an `EndpointCall` whose `get()`
 * resolves as request() does). A function gets an object too,
 * whose `request()` throws: functions have no URL (`.remote()` calls them).
 */
import { isSchema, type InterfaceWorkload } from 'svc/plugin';
import { jsDoc } from './names.js';
import type { TypeMapper } from './schema-types.js';
import { argumentsType, infoLiteral, schemaProperties, withDoc, type RenderedWorkload, type WorkloadNames } from './workload.js';

export function renderEndpoint(workload: InterfaceWorkload, names: WorkloadNames, mapper: TypeMapper): RenderedWorkload {
  const args = argumentsOf(workload, names, mapper);
  const returns = returnsOf(workload.returns, mapper, names.hint);
  const method = callMethod(workload.methods);
  /** What request() gives: the typed answer, or an async iterable of a generator's items. */
  const answer = returns.stream ? `AsyncIterable<${returns.type}>` : returns.type;
  const how = ['POST', 'PUT', 'PATCH'].includes(method) ? 'the arguments as a JSON body' : 'the arguments as query parameters';
  const call = [
    `Calls ${method} ${workload.route ?? '/'} of ${names.app} (${how}), ${workload.authorized ? 'with the token' : 'a public URL'},`,
    returns.stream
      ? 'and yields each item of the streamed answer (Server-Sent Events) as it arrives.'
      : `and resolves to the answer${returns.raw ? ' (its bytes)' : ''}.`,
    "An error answer is thrown as SvcError with svc's code (unauthorized, not_found, ...).",
  ].join('\n');
  const arrays =
    isSchema(workload.parameters) && isSchema(workload.parameters.properties)
      ? Object.entries(workload.parameters.properties)
          .filter(([, p]) => isSchema(p) && p.type === 'array' && !Array.isArray(p.prefixItems))
          .map(([key]) => key)
      : [];
  return {
    declarations: [
      ...args.declaration,
      ...jsDoc(workload.doc ?? `The endpoint ${workload.name} of ${names.app}: ${method} ${workload.route ?? '/'}.`),
      `export interface ${names.type} extends WorkloadInfo<"endpoint"> {`,
      ...jsDoc(withDoc(workload.doc, call), '  '),
      `  request(${args.parameter}): ${returns.stream ? answer : `Promise<${answer}>`};`,
      '  /** The same call as request(); resolves to the answer as it came (an error answer is returned, not thrown). */',
      `  raw(${args.parameter}): Promise<ClientResponse>;`,
      ...jsDoc(
        [
          'The same request as request(), sent with Prefer: respond-async: svc keeps it as a call and answers at once.',
          'Resolves to an EndpointCall: callId, get({ timeoutMs }) resolving to the answer as request() does, cancel().',
          'Needs a token (the answer is read with one).',
        ].join('\n'),
        '  ',
      ),
      `  spawn(${args.parameter}): Promise<EndpointCall<${answer}>>;`,
      '  /** The call spawn() started, by its id (EndpointCall#callId), from any process of the same workspace. */',
      `  callFromId(callId: string): EndpointCall<${answer}>;`,
      '  /** The same endpoint, calling with these options (merged over its own). */',
      `  withOptions(options: ClientOptions): ${names.type};`,
      '}',
      '',
    ],
    construct: `new Endpoint(${infoLiteral(workload, names.app)}, options, ${JSON.stringify({ methods: workload.methods, arrays, stream: returns.stream, raw: returns.raw })})`,
  };
}

export function renderFunction(workload: InterfaceWorkload, names: WorkloadNames, mapper: TypeMapper): RenderedWorkload {
  const args = argumentsOf(workload, names, mapper);
  const why = `${workload.name} is a function: it has no URL, so this client cannot call it and request() throws TypeError.\nCall ${workload.name}.remote(...) from the project that defines it, or svc run <file>:${workload.name}.`;
  return {
    declarations: [
      ...args.declaration,
      ...jsDoc(workload.doc ?? `The function ${workload.name} of ${names.app}.`),
      `export interface ${names.type} extends WorkloadInfo<"function"> {`,
      ...jsDoc(withDoc(workload.doc, why), '  '),
      `  request(${args.parameter}): never;`,
      `  withOptions(options: ClientOptions): ${names.type};`,
      '}',
      '',
    ],
    construct: `new FunctionWorkload(${infoLiteral(workload, names.app)}, options, {})`,
  };
}

function argumentsOf(workload: InterfaceWorkload, names: WorkloadNames, mapper: TypeMapper) {
  const properties = schemaProperties(workload.parameters, mapper, names.hint);
  const extra =
    isSchema(workload.parameters) &&
    workload.parameters.additionalProperties !== undefined &&
    workload.parameters.additionalProperties !== false;
  const name = properties.length > 0 || extra ? names.scope.take(`${names.hint}Arguments`) : '';
  return argumentsType(name, `The arguments of ${workload.name}, by the names of its parameters.`, properties, extra);
}

interface Returns {
  readonly type: string;
  readonly stream: boolean;
  /** A bytes return: the body as it came. */
  readonly raw: boolean;
}

function returnsOf(schema: unknown, mapper: TypeMapper, hint: string): Returns {
  if (!isSchema(schema)) return { type: 'unknown', stream: false, raw: false };
  if (schema.type === 'string' && schema.contentMediaType === 'application/octet-stream')
    return { type: 'Uint8Array', stream: false, raw: true };
  if (schema['x-svc-stream'] === true) return { type: mapper.type(schema.items, `${hint}Item`), stream: true, raw: false };
  return { type: mapper.type(schema, `${hint}Result`), stream: false, raw: false };
}

/** The method `request()` uses: the first of POST, PUT, PATCH the endpoint takes, else GET, else its first (as the runtime's). */
function callMethod(methods: readonly string[]): string {
  return (
    ['POST', 'PUT', 'PATCH'].find((m) => methods.includes(m)) ?? (methods.includes('GET') || methods.length === 0 ? 'GET' : methods[0]!)
  );
}
