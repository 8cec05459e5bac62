/**
 * Realtime handlers: `chat.connect()` resolves to a WebSocket session whose
 * `send(message: ChatMessage)` and messages (`Typing | Token | Done`) are typed
 * by the handler's message parameter and its return (one message per item of
 * a streamed or iterable return), as the runtime frames them: a string,
 * bytes or untyped message travels as it is, anything else as JSON.
 */
import { isSchema, type InterfaceWorkload } from 'svc/plugin';
import { jsDoc } from './names.js';
import { union, unionMembers, UNKNOWN, type TypeMapper } from './schema-types.js';
import { infoLiteral, withDoc, type RenderedWorkload, type WorkloadNames } from './workload.js';

export function renderRealtime(workload: InterfaceWorkload, names: WorkloadNames, mapper: TypeMapper): RenderedWorkload {
  const message = messageOf(workload.parameters, mapper, names.hint);
  const item = itemOf(workload.returns, mapper, names.hint);
  const connection = names.scope.take(`${names.hint}Connection`);
  const connect = `Opens a WebSocket session with ${workload.name}: each send() calls it once; receive() or for await takes its replies one message at a time.\nResolved once the session is open; a refused one (a bad token) throws SvcError with svc's code.`;
  return {
    declarations: [
      ...jsDoc(
        `A WebSocket session with ${workload.name} of ${names.app}: send() a message (${workload.name} is called once with it), then read the replies.`,
      ),
      `export type ${connection} = Connection<${message.type}, ${item.type}>;`,
      '',
      ...jsDoc(workload.doc ?? `The realtime handler ${workload.name} of ${names.app}.`),
      `export interface ${names.type} extends WorkloadInfo<"realtime"> {`,
      ...jsDoc(withDoc(workload.doc, connect), '  '),
      `  connect(): Promise<${connection}>;`,
      `  withOptions(options: ClientOptions): ${names.type};`,
      '}',
      '',
    ],
    construct: `new Realtime(${infoLiteral(workload, names.app)}, options, ${JSON.stringify({ messageRaw: message.raw, items: item.mode })})`,
  };
}

/** The handler's first parameter: the incoming message. */
function messageOf(parameters: unknown, mapper: TypeMapper, hint: string): { type: string; raw: boolean } {
  const properties = isSchema(parameters) && isSchema(parameters.properties) ? Object.values(parameters.properties) : [];
  const schema = properties[0] ?? {};
  if (isBytes(schema)) return { type: 'Uint8Array', raw: true };
  const type = mapper.type(schema, `${hint}Message`);
  if (type === UNKNOWN) return { type: 'string | Uint8Array', raw: true };
  const raw = unionMembers(type).every((member) => member === 'string' || member === 'null');
  return { type: raw ? 'string' : type, raw };
}

/** One message the handler sends: an item of a streamed or iterable return, else the return itself. */
function itemOf(returns: unknown, mapper: TypeMapper, hint: string): { type: string; mode: 'json' | 'raw' | 'typed' } {
  let schema: unknown = returns;
  if (isSchema(returns) && returns.type === 'array') {
    const prefix = returns.prefixItems;
    schema = Array.isArray(prefix) ? { anyOf: prefix } : (returns.items ?? {});
  }
  if (isBytes(schema)) return { type: 'Uint8Array', mode: 'raw' };
  const type = mapper.type(schema, `${hint}Reply`);
  if (type === UNKNOWN || type === 'null') return { type: UNKNOWN, mode: 'json' };
  // str replies travel as text frames, not JSON (the runtime's rule): they come as they are.
  if (unionMembers(type).every((member) => member === 'string' || member === 'null')) return { type: union(['string']), mode: 'raw' };
  return { type, mode: 'typed' };
}

function isBytes(schema: unknown): boolean {
  return (
    isSchema(schema) &&
    schema.type === 'string' &&
    (schema.contentEncoding === 'base64' || schema.contentMediaType === 'application/octet-stream')
  );
}
