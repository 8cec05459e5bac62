/**
 * The generated packages compile under `tsc --strict` (and more: exact
 * optional properties, unchecked index access, no unused locals, no DOM, no
 * Node types), with a consumer that uses every method, whose deliberate
 * mistakes (`@ts-expect-error`) must be errors: the types say something.
 * No exported declaration holds `any`. The same tsc run compiles the hostile
 * interface's package (hostile-app.ts) with its consumer, and the runtime's
 * runtime.d.ts as it is in the repository: one cold tsc for all of them.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { typescriptExporter } from '../../../plugins/export-typescript/index.js';
import { tempDir } from '../../helpers/config.js';
import { HOSTILE_CONSUMER, hostile } from './hostile-app.js';
import { declarationCode, fastapiApi, fixtureInterface, tsc, withApi, writeExport, writeRuntimePackage } from './ts-helpers.js';

/** Uses every method of the quickstart, kitchen-sink, realtime-chat and asgi-fastapi (with its operations) clients. */
const CONSUMER = `
import { CallTimeoutError, createClient, greet, hello, square, SvcError, type CallStatus, type EndpointCall, type Greeting, type SvcErrorCode } from './svc-clients/quickstart/index.js';
import * as sink from './svc-clients/kitchen-sink/index.js';
import { chat, type ChatMessage, type Done, type Token, type Typing } from './svc-clients/realtime-chat/index.js';
import { api, type Todo, type TodoIn } from './svc-clients/asgi-fastapi/index.js';

declare const console: { log(...values: unknown[]): void };
declare function maybe(): string | undefined;

export async function quickstart(): Promise<void> {
  const greeting: Greeting = await greet.request({ name: 'Ada', excited: true });
  const length: number = greeting.length;
  const hi: Record<string, unknown> = await hello.request();
  await hello.request({ name: 'Bo' });
  const raw = await greet.raw({ name: 'Ada' });
  const status: number = raw.status;
  const client = createClient({ server: 'http://127.0.0.1:7420', token: null });
  const fromEnvironment = createClient({ token: maybe(), server: maybe(), WebSocket: undefined });
  const other = client.greet.withOptions({ token: 'svc_x' });
  await other.request({ name: 'Cy' });
  // @ts-expect-error name is required
  await greet.request({ excited: true });
  // @ts-expect-error excited is a boolean
  await greet.request({ name: 'Ada', excited: 'yes' });
  const never: never = square.request({ x: 3 });
  const call: EndpointCall<Greeting> = await greet.spawn({ name: 'Ada' });
  const later: Greeting = await greet.callFromId(call.callId).get({ timeoutMs: 1000 });
  const state: CallStatus = await call.status();
  await call.cancel();
  // @ts-expect-error name is required, as for request()
  await greet.spawn({});
  try {
    await call.get({ timeoutMs: 0 });
  } catch (error) {
    if (error instanceof CallTimeoutError) console.log(error.callId);
  }
  console.log(later.message, state);
  try {
    await greet.request({ name: 'Ada' });
  } catch (error) {
    if (error instanceof SvcError) {
      const code: SvcErrorCode | string = error.code;
      const hint: string | null = error.hint;
      console.log(code, error.status, hint, error.details);
    }
  }
  console.log(length, hi, status, never, greet.url, greet.kind === 'endpoint', fromEnvironment);
}

export async function kitchenSink(): Promise<void> {
  const points: Record<string, sink.Point> = await sink.class_.request({ 'first name': 'a', kwargs: [1, 'a'] });
  for await (const point of sink.count.request({ to: 2 })) console.log(point.x + point.y);
  const streamed: AsyncIterable<sink.Point> = await (await sink.count.spawn({ to: 2 })).get();
  const kept: Uint8Array = await sink.raw.callFromId('call-0123456789abcdef0123').get();
  console.log(streamed, kept);
  const people: sink.Person[] = await sink.people.request({ person: { name: 'Ada', addresses: [{ street: 's', 'zip-code': '1' }] }, strict: true });
  const friend: sink.Person | null | undefined = people[0]?.best_friend;
  const bytes: Uint8Array = await sink.raw.request({ data: 'AA==', options: { verbose: true }, extra: 1 });
  const shape = await sink.shapes.request({ ids: [1, 2], color: 'red' });
  if (shape !== null) console.log(shape.points.length, shape.parent?.tags);
  // @ts-expect-error color is red or green
  await sink.shapes.request({ ids: [], color: 'blue' });
  const echo = await sink.echo.connect();
  echo.send('hi');
  const reply: string = await echo.receive();
  await echo.close();
  const three = await sink.w3d.withOptions({ token: 't' }).connect();
  for await (const message of three) console.log(message.length);
  console.log(points, friend, bytes, reply, sink.APP, sink.GENERATED_FROM.versions['3d']);
}

export async function realtimeChat(): Promise<void> {
  const session = await chat.connect();
  const message: ChatMessage = { user: 'Ada', text: 'hello' };
  session.send(message);
  // @ts-expect-error text is missing
  session.send({ user: 'Ada' });
  for await (const reply of session) {
    const typed: Typing | Token | Done = reply;
    if (reply.type === 'token') console.log(reply.text);
    if (reply.type === 'done') break;
    console.log(typed);
  }
  const next: Typing | Token | Done = await session.receive();
  console.log(next, session.closed);
  await session.close();
}

export async function asgi(): Promise<void> {
  const body: TodoIn = { title: 'write the docs' };
  const created: Todo = await api.createTodo({ body });
  const fetched: Todo = await api.getTodo({ todo_id: created.id });
  const all: Todo[] = await api.listTodos();
  const done: Todo[] = await api.listTodos({ done: true });
  await api.listTodos({ done: null });
  // @ts-expect-error todo_id is a number
  await api.getTodo({ todo_id: 'one' });
  // @ts-expect-error the body is required
  await api.createTodo({});
  const response = await api.request('GET', '/todos', { query: { done: true }, headers: { 'x-test': '1' } });
  const parsed: unknown = response.json();
  const socket = await api.withOptions({ server: 'http://127.0.0.1:7420' }).connect('/ws');
  socket.send('buy milk');
  const frame: string | Uint8Array = await socket.receive();
  await socket.close();
  console.log(fetched.href, all.length, done, parsed, frame, response.headers['content-type']);
}
`;

const EXPORTS = () => [
  fixtureInterface('quickstart'),
  fixtureInterface('kitchen-sink'),
  fixtureInterface('realtime-chat'),
  withApi(fixtureInterface('asgi-fastapi'), fastapiApi()),
];

describe('svc:export-typescript: the generated packages type-check', function () {
  this.timeout(120_000);
  const out = tempDir('svc-export-ts-compile-');
  before(() => {
    for (const iface of EXPORTS()) writeExport(out, typescriptExporter.export(iface, {}));
    writeFileSync(path.join(out, 'consumer.ts'), CONSUMER);
    // In folders of their own: the hostile package stays out of the count and the any check below.
    writeExport(path.join(out, 'hostile'), typescriptExporter.export(hostile(), {}));
    writeFileSync(path.join(out, 'hostile', 'consumer.ts'), HOSTILE_CONSUMER);
    writeRuntimePackage(path.join(out, 'runtime'));
  });

  it("compiles with tsc --strict (NodeNext, no DOM, no Node types), in one run: every client and a consumer using every method (its mistakes are errors), the hostile interface's package and a consumer of each of its methods, and runtime.d.ts as in the repository", () => {
    const checked = tsc(out, ['consumer.ts', 'hostile/consumer.ts', 'runtime/runtime.d.ts']);
    assert.equal(checked.status, 0, checked.output);
  });

  it('has no any in any exported declaration', () => {
    const declarations = readdirSync(path.join(out, 'svc-clients'), { recursive: true, encoding: 'utf8' }).filter((file) =>
      file.endsWith('.d.ts'),
    );
    assert.equal(declarations.length, 12, 'index, runtime and errors .d.ts of four clients');
    for (const file of declarations) {
      const code = declarationCode(readFileSync(path.join(out, 'svc-clients', file), 'utf8'));
      assert.doesNotMatch(code, /\bany\b/, file);
    }
  });
});
