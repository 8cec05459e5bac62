/**
 * Realtime handlers: `chat.connect()` opens a WebSocket session whose
 * `send(message: ChatMessage)` and `receive() -> Typing | Token | Done` are
 * typed by the handler's message parameter and its return (one message per
 * item of a streamed or iterable return), as the runtime frames them: a
 * `str`/`bytes`/untyped message travels as it is, anything else as JSON.
 */
import type { InterfaceWorkload } from 'svc/plugin';
import { common, withDoc, type WorkloadNames } from './endpoint.js';
import { identifier, pyDocstring, pyString } from './names.js';
import { ANY, isSchema, typedAs, union, unionMembers, type TypeMapper } from './schema-types.js';

export function renderRealtime(workload: InterfaceWorkload, names: WorkloadNames, mapper: TypeMapper): string {
  const message = messageOf(workload.parameters, mapper, names.hint);
  const item = itemOf(workload.returns, mapper, names.hint);
  const connection = `${names.cls}Connection`;
  const parameter = message.name === 'self' || message.name === 'timeout' ? `${message.name}_` : message.name;
  const connect = `Opens a WebSocket session with ${workload.name}: each send() calls it once, receive() takes its replies one message at a time.\nNeeds the websockets package (pip install websockets); use it as a context manager to close it.\nopen_timeout: seconds to wait for the handshake; None (the default) waits as long as the gateway queues it (a cold start), which answers 503 no_capacity when no container frees up in time.`;
  return [
    `class ${connection}(_rt.Connection):`,
    pyDocstring(`A WebSocket session with ${workload.name} of ${names.app}: send() messages, receive() the replies.`, '    '),
    '',
    `    def send(self, ${parameter}: ${message.type}) -> None:`,
    pyDocstring(
      `Sends one message: ${workload.name} is called once with it${message.raw ? '' : ' (sent as JSON; a dict works too)'}.`,
      '        ',
    ),
    `        self._send(${parameter})`,
    '',
    `    def receive(self, timeout: float | None = None) -> ${item.type}:`,
    pyDocstring(
      "The next message from the handler, waiting for it (TimeoutError after `timeout` seconds).\n\nAn error message (a message that did not fit, a handler that raised) raises svc's typed exception; the session goes on.\nRaises _rt.ConnectionClosed once the session is over.",
      '        ',
    ),
    `        return ${typedAs(item.type, 'self._receive(timeout)')}`,
    '',
    '',
    `class ${names.cls}(_rt.Realtime):`,
    pyDocstring(workload.doc ?? `The realtime handler ${workload.name} of ${names.app}.`, '    '),
    '',
    `    def connect(self, *, headers: dict[str, str] | None = None, open_timeout: float | None = None) -> ${connection}:`,
    pyDocstring(withDoc(workload.doc, connect), '        '),
    `        return self._connect(${connection}, headers, open_timeout)`,
    '',
    '',
    `${names.object} = ${names.cls}(`,
    ...common(workload, names),
    `    message_raw=${message.raw ? 'True' : 'False'},`,
    `    item=${item.type},`,
    `    items=${pyString(item.mode)},`,
    ')',
  ].join('\n');
}

/** The handler's first parameter: the incoming message. */
function messageOf(parameters: unknown, mapper: TypeMapper, hint: string): { name: string; type: string; raw: boolean } {
  const properties = isSchema(parameters) && isSchema(parameters.properties) ? Object.entries(parameters.properties) : [];
  const [key, schema] = properties[0] ?? ['message', {}];
  const type = mapper.type(schema, `${hint}Message`);
  return { name: identifier(key, 'p_'), type, raw: isRaw(type) };
}

/** One message the handler sends: an item of a streamed or iterable return, else the return itself. */
function itemOf(returns: unknown, mapper: TypeMapper, hint: string): { type: string; mode: 'json' | 'raw' | 'typed' } {
  let schema: unknown = returns;
  if (isSchema(returns) && returns.type === 'array') {
    const prefix = returns.prefixItems;
    schema = Array.isArray(prefix) ? { anyOf: prefix } : (returns.items ?? {});
  }
  const type = isSchema(schema) ? mapper.type(schema, `${hint}Reply`) : ANY;
  if (type === ANY || type === 'None') return { type: ANY, mode: 'json' };
  return { type, mode: isRaw(type) ? 'raw' : 'typed' };
}

/** str, bytes and their unions travel as text and binary frames, not JSON (the runtime's rule). */
function isRaw(type: string): boolean {
  return type === ANY || unionMembers(union([type])).every((member) => member === 'str' || member === 'bytes' || member === 'None');
}
