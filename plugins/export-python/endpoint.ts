/**
 * One object per endpoint: `greet.request(name="Ada", excited=True) -> Greeting`
 * with the function's own signature and docstring, and `greet.raw(...)` for
 * the HTTP response as it came. A function gets an object too, whose
 * `request()` explains that functions are called with `.remote()`.
 */
import type { InterfaceWorkload } from 'svc/plugin';
import { pyDocstring, pyString } from './names.js';
import { ANY, isSchema, typedAs, type TypeMapper } from './schema-types.js';
import { argumentsDict, parameterList, receiverFor, signatureOf } from './signature.js';

/** What every workload class is built from. */
export interface WorkloadNames {
  readonly app: string;
  /** The module-level object (`greet`). */
  readonly object: string;
  /** Its private class (`_Greet`). */
  readonly cls: string;
  /** Base name for untitled models (`Greet`). */
  readonly hint: string;
}

export function renderEndpoint(workload: InterfaceWorkload, names: WorkloadNames, mapper: TypeMapper): string {
  const signature = signatureOf(workload.parameters, mapper, names.hint);
  const returns = returnsOf(workload.returns, mapper, names.hint);
  const self = receiverFor(signature);
  const params = parameterList(signature, self);
  const args = argumentsDict(signature);
  const method = callMethod(workload.methods);
  const how =
    method === 'GET' || !['POST', 'PUT', 'PATCH'].includes(method)
      ? ' (the arguments as query parameters)'
      : ' (the arguments as a JSON body)';
  const call = [
    `Calls ${method} ${workload.route ?? '/'} of ${names.app}${how}, ${workload.authorized ? 'with your svc token' : 'a public URL'},`,
    returns.stream
      ? `and yields each item of the streamed answer (Server-Sent Events) as it arrives, as ${returns.decode}.`
      : `and returns the answer as ${returns.raw ? 'bytes' : returns.decode}.`,
    "An error answer raises svc's typed exception (svc.UnauthorizedError, svc.NotFoundError, ...).",
  ].join('\n');
  return [
    `class ${names.cls}(_rt.Endpoint):`,
    pyDocstring(workload.doc ?? `The endpoint ${workload.name} of ${names.app}: ${method} ${workload.route ?? '/'}.`, '    '),
    '',
    `    def request(${params}) -> ${returns.annotation}:`,
    pyDocstring(withDoc(workload.doc, call), '        '),
    // _call decodes into the annotated type at run time; the cast tells type checkers so.
    `        return ${typedAs(returns.annotation, `${self}._call(${args})`)}`,
    '',
    `    def raw(${params}) -> _rt.Response:`,
    pyDocstring('The same call as request(); returns the HTTP response as it came (an error answer is returned, not raised).', '        '),
    `        return ${self}._send(${args})`,
    '',
    ...spawnMethods(params, args, self, returns.annotation),
    '',
    '',
    `${names.object} = ${names.cls}(`,
    ...common(workload, names),
    `    methods=(${workload.methods.map((m) => `${pyString(m)},`).join(' ')}),`,
    `    returns=${returns.decode},`,
    `    arrays=(${signature.arrays.map((key) => `${pyString(key)},`).join(' ')}),`,
    ...(returns.stream ? ['    stream=True,'] : []),
    ...(returns.raw ? ['    raw=True,'] : []),
    ')',
  ].join('\n');
}

export function renderFunction(workload: InterfaceWorkload, names: WorkloadNames, mapper: TypeMapper): string {
  const signature = signatureOf(workload.parameters, mapper, names.hint);
  const returns = returnsOf(workload.returns, mapper, names.hint);
  const self = receiverFor(signature);
  const why = `${workload.name} is a function: it has no URL, so this client cannot call it and request() raises TypeError.\nCall ${workload.name}.remote(...) from the project that defines it, or svc run <file>:${workload.name}.`;
  return [
    `class ${names.cls}(_rt.Function):`,
    pyDocstring(workload.doc ?? `The function ${workload.name} of ${names.app}.`, '    '),
    '',
    `    def request(${parameterList(signature, self)}) -> ${returns.annotation}:`,
    pyDocstring(withDoc(workload.doc, why), '        '),
    // `_refuse()` never returns; a function annotated `-> None` may not `return` a value (mypy --strict).
    `        ${returns.annotation === 'None' ? '' : 'return '}${self}._refuse()`,
    '',
    '    remote = request',
    '',
    '',
    `${names.object} = ${names.cls}(`,
    ...common(workload, names),
    ')',
  ].join('\n');
}

/**
 * `spawn(...)`: the request of request() sent with `Prefer: respond-async`, so svc keeps it as a
 * call and answers at once; and `call_from_id(id)` to read such a call again from any process.
 */
function spawnMethods(params: string, args: string, self: string, annotation: string): string[] {
  const call = `EndpointCall[${annotation}]`;
  return [
    `    def spawn(${params}) -> ${call}:`,
    pyDocstring(
      [
        'The same request as request(), sent with Prefer: respond-async: svc keeps it as a call and answers at once.',
        '',
        `Returns an EndpointCall: call_id, get(timeout=None) -> ${annotation} (as request() returns it), cancel().`,
        'Needs a token (the answer is read with one).',
      ].join('\n'),
      '        ',
    ),
    `        return ${self}._spawn(${args})`,
    '',
    `    def call_from_id(self, call_id: str) -> ${call}:`,
    pyDocstring('The call spawn() started, by its id (EndpointCall.call_id), from any process of the same workspace.', '        '),
    '        return self._call_from_id(call_id)',
  ];
}

/** The keyword arguments every workload object takes. */
export function common(workload: InterfaceWorkload, names: WorkloadNames): string[] {
  const text = (value: string | null) => (value === null ? 'None' : pyString(value));
  return [
    `    app=${pyString(names.app)},`,
    `    name=${pyString(workload.name)},`,
    `    kind=${pyString(workload.kind)},`,
    `    path=${text(workload.path)},`,
    `    url=${text(workload.url)},`,
    `    authorized=${workload.authorized ? 'True' : 'False'},`,
  ];
}

/** The user's docstring, a blank line, then what the generated method does. */
export function withDoc(doc: string | null, text: string): string {
  return doc === null ? text : `${doc}\n\n${text}`;
}

interface Returns {
  /** The return annotation. */
  readonly annotation: string;
  /** What the answer (or each streamed item) is decoded as. */
  readonly decode: string;
  readonly stream: boolean;
  readonly raw: boolean;
}

function returnsOf(schema: unknown, mapper: TypeMapper, hint: string): Returns {
  if (!isSchema(schema)) return { annotation: ANY, decode: ANY, stream: false, raw: false };
  if (schema.type === 'string' && schema.contentMediaType === 'application/octet-stream') {
    return { annotation: 'bytes', decode: 'bytes', stream: false, raw: true };
  }
  if (schema['x-svc-stream'] === true) {
    const item = mapper.type(schema.items, `${hint}Item`);
    return { annotation: `typing.Iterator[${item}]`, decode: item, stream: true, raw: false };
  }
  const type = mapper.type(schema, `${hint}Result`);
  return { annotation: type, decode: type, stream: false, raw: false };
}

/** The method `request()` uses: the first of POST, PUT, PATCH the endpoint takes, else GET, else its first. */
export function callMethod(methods: readonly string[]): string {
  return (
    ['POST', 'PUT', 'PATCH'].find((m) => methods.includes(m)) ?? (methods.includes('GET') || methods.length === 0 ? 'GET' : methods[0]!)
  );
}
