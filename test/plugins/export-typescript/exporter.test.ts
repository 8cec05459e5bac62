import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createPluginHost } from '../../../core/infra/plugin/host.js';
import type { AppInterface, InterfaceApi, InterfaceOperation, InterfaceWorkload } from '../../../core/infra/plugin/types.js';
import exportTypeScriptPlugin, { typescriptExporter } from '../../../plugins/export-typescript/index.js';
import { tempDir } from '../../helpers/config.js';
import { fastapiApi, fixtureInterface, tsc, withApi, writeExport } from './ts-helpers.js';

const fileOf = (iface: AppInterface, name: string): string => {
  const found = typescriptExporter.export(iface, {}).files.find((file) => file.path.endsWith(`/${name}`));
  assert.ok(found, name);
  return found.contents;
};

const fastapi = () => withApi(fixtureInterface('asgi-fastapi'), fastapiApi());

/** An app whose every name, doc and string is hostile to TypeScript. */
function hostile(): AppInterface {
  const base = fixtureInterface('quickstart').workloads[0]!;
  const workload = (name: string, overrides: Partial<InterfaceWorkload>): InterfaceWorkload => ({ ...base, name, api: null, ...overrides });
  const operation = (name: string, overrides: Partial<InterfaceOperation>): InterfaceOperation => ({
    name,
    operationId: null,
    method: 'GET',
    path: '/x',
    summary: null,
    description: null,
    deprecated: false,
    parameters: [],
    body: null,
    result: { status: 200, contentType: 'application/json', schema: {} },
    ...overrides,
  });
  const api: InterfaceApi = {
    openapi: {},
    source: '/openapi.json',
    capturedAt: '2026-01-01T00:00:00Z',
    definitions: { 'Bad */ Name': { type: 'object', properties: { 'a b': { type: 'string' } } } },
    operations: [
      operation('request', { description: 'Clashes with request(). */ oops' }),
      operation('delete_item', {
        method: 'DELETE',
        path: '/items/{item-id}',
        parameters: [{ name: 'item-id', in: 'path', required: true, schema: { type: 'integer' }, description: null }],
        result: { status: 204, contentType: null, schema: null },
        deprecated: true,
      }),
      operation('upload', {
        method: 'POST',
        parameters: [
          { name: 'body', in: 'query', required: false, schema: { type: 'string' }, description: null },
          { name: 'x-trace', in: 'header', required: false, schema: { type: 'string' }, description: null },
        ],
        body: { contentType: 'text/plain', required: true, schema: {} },
        result: { status: 200, contentType: 'text/plain', schema: null },
      }),
      operation('bad', { result: { status: 200, contentType: 'application/json', schema: { $ref: '#/$defs/Bad */ Name' } } }),
    ],
  };
  return {
    app: 'we*/ird',
    generatedFrom: { versions: { delete: 1, 'new-thing': 2, api: 1 } },
    workloads: [
      workload('delete', {
        doc: 'Ends */ the comment? "quotes" and \\ backslashes.',
        parameters: { type: 'object', properties: { 'x"y': { type: 'string' }, default: { type: 'integer' } }, required: ['x"y'] },
        returns: { type: 'object', title: 'Promise', properties: { "it's": { const: '*/' } } },
      }),
      workload('new-thing', { kind: 'realtime', parameters: { type: 'object', properties: { m: {} } }, returns: {} }),
      workload('api', { kind: 'asgi', parameters: null, returns: null, api }),
    ],
  };
}

describe('svc:export-typescript', () => {
  it('registers the exporter typescript through the public plugin API', () => {
    const host = createPluginHost([exportTypeScriptPlugin()]);
    assert.deepEqual([...host.exporters.keys()], ['typescript']);
    assert.equal(host.exporters.get('typescript')!.plugin, 'svc:export-typescript');
  });

  it('writes svc-clients/<app>/ as an ESM package @svc-clients/<app>, or under packageName; refuses a name npm would', () => {
    const exported = typescriptExporter.export(fixtureInterface('realtime-chat'), { outDir: '/home/me/project' });
    assert.equal(exported.root, 'svc-clients/realtime-chat');
    assert.equal(exported.importName, '@svc-clients/realtime-chat');
    assert.deepEqual(
      exported.files.map((f) => f.path.slice(exported.root.length + 1)),
      ['package.json', 'index.js', 'index.d.ts', 'runtime.js', 'runtime.d.ts', 'errors.js', 'errors.d.ts'],
    );
    assert.match(
      exported.usage.join('\n'),
      /import \{ createClient, chat \} from '\.\/svc-clients\/realtime-chat\/index\.js'.*\n.*npm install \/home\/me\/project\/svc-clients\/realtime-chat/,
    );
    assert.equal(typescriptExporter.export(fixtureInterface('quickstart'), { packageName: 'qs' }).root, 'svc-clients/qs');
    for (const bad of ['../x', 'Upper', '', '@scope/x'])
      assert.throws(() => typescriptExporter.export(fixtureInterface('quickstart'), { packageName: bad }), { code: 'usage_invalid' }, bad);
  });

  it('starts every file with the generated-by mark in its first 300 characters (package.json: its first key), naming the versions', () => {
    for (const file of typescriptExporter.export(fixtureInterface('kitchen-sink'), {}).files) {
      const head = file.contents.slice(0, 300);
      assert.ok(head.includes('Generated by `svc app export` from the deployed app kitchen-sink'), file.path);
      assert.ok(head.includes('3d v2, class v2'), file.path);
    }
    assert.match(fileOf(fixtureInterface('quickstart'), 'package.json'), /^\{\n {2}"description": "Generated by `svc app export`/);
  });

  it('gives the error codes of this svc, with their statuses', () => {
    const errors = fileOf(fixtureInterface('quickstart'), 'errors.d.ts');
    assert.match(errors, /\| "unauthorized"\n/);
    assert.match(errors, /\| "queue_full"\n/);
    assert.match(fileOf(fixtureInterface('quickstart'), 'errors.js'), /^ {2}not_found: 404,$/m);
  });

  it('renders an endpoint: one arguments interface, request() to its type, raw(), withOptions(); the wire protocol in the object', () => {
    const dts = fileOf(fixtureInterface('quickstart'), 'index.d.ts');
    assert.match(
      dts,
      /export interface GreetArguments \{\n {2}name: string;\n {2}\/\*\* Default: false\. \*\/\n {2}excited\?: boolean;\n\}/,
    );
    assert.match(dts, / {2}request\(args: GreetArguments\): Promise<Greeting>;/);
    assert.match(dts, / {2}request\(args\?: HelloArguments\): Promise<Record<string, unknown>>;/);
    assert.match(dts, / {2}request\(args: SquareArguments\): never;/);
    const js = fileOf(fixtureInterface('kitchen-sink'), 'index.js');
    assert.match(
      js,
      /count: new Endpoint\(\{"app":"kitchen-sink","name":"count",.*\}, options, \{"methods":\["GET"\],"arrays":\[\],"stream":true,"raw":false\}\)/,
    );
    assert.match(js, /shapes: new Endpoint\(.*\{"methods":\["GET"\],"arrays":\["ids"\],"stream":false,"raw":false\}\)/);
    assert.match(js, /raw: new Endpoint\(.*"raw":true\}\)/);
    const sink = fileOf(fixtureInterface('kitchen-sink'), 'index.d.ts');
    assert.match(sink, / {2}request\(args\?: CountArguments\): AsyncIterable<Point>;/);
    assert.match(sink, / {2}request\(args: RawArguments\): Promise<Uint8Array>;/);
    assert.match(sink, /export interface RawArguments \{[^}]*\[key: string\]: unknown;\n\}/);
  });

  it('renders a realtime handler: a typed Connection of its message and its items', () => {
    const dts = fileOf(fixtureInterface('realtime-chat'), 'index.d.ts');
    assert.match(dts, /export type ChatConnection = Connection<ChatMessage, Typing \| Token \| Done>;/);
    assert.match(dts, / {2}connect\(\): Promise<ChatConnection>;/);
    assert.match(
      dts,
      /export interface Typing \{\n {2}\/\*\* Default: "typing"\. \*\/\n {2}type\?: "typing";|export interface Typing \{\n {2}type\?: "typing";/,
    );
    assert.match(
      fileOf(fixtureInterface('realtime-chat'), 'index.js'),
      /new Realtime\(.*, options, \{"messageRaw":false,"items":"typed"\}\)/,
    );
    assert.match(fileOf(fixtureInterface('kitchen-sink'), 'index.d.ts'), /export type EchoConnection = Connection<string, string>;/);
  });

  it('renders an ASGI app without operations: the generic request() and connect() only', () => {
    const dts = fileOf(fixtureInterface('asgi-fastapi'), 'index.d.ts');
    assert.match(
      dts,
      /export interface ApiAsgi extends WorkloadInfo<"asgi">, AsgiApp \{\n {2}withOptions\(options: ClientOptions\): ApiAsgi;\n\}/,
    );
    assert.match(dts, /published no OpenAPI description/);
  });

  it("renders one typed method per operation of the FastAPI example, from the operations' schemas and the definitions", () => {
    const dts = fileOf(fastapi(), 'index.d.ts');
    assert.match(dts, / {2}listTodos\(args\?: ApiListTodosArguments\): Promise<Todo\[\]>;/);
    assert.match(dts, / {2}createTodo\(args: ApiCreateTodoArguments\): Promise<Todo>;/);
    assert.match(dts, / {2}getTodo\(args: ApiGetTodoArguments\): Promise<Todo>;/);
    assert.match(
      dts,
      /export interface ApiListTodosArguments \{\n {2}\/\*\* The query parameter done\. \*\/\n {2}done\?: boolean \| null;\n\}/,
    );
    assert.match(dts, /export interface ApiGetTodoArguments \{\n {2}\/\*\* The path parameter todo_id\. \*\/\n {2}todo_id: number;\n\}/);
    assert.match(
      dts,
      /export interface ApiCreateTodoArguments \{\n {2}\/\*\* The request body \(application\/json\)\. \*\/\n {2}body: TodoIn;\n\}/,
    );
    assert.match(dts, /export interface Todo \{\n {2}title: string;\n {2}done\?: boolean;\n {2}id: number;\n {2}href: string;\n\}/);
    assert.match(dts, /export interface TodoIn \{\n {2}title: string;\n {2}done\?: boolean;\n\}/);
    assert.match(dts, /One todo by id; 404 when there is none\.\n {3}\*\n {3}\* Sends GET \/todos\/\{todo_id\} to api/);
    const js = fileOf(fastapi(), 'index.js');
    assert.match(
      js,
      /\{"name":"getTodo","method":"GET","path":"\/todos\/\{todo_id\}","parameters":\[\{"key":"todo_id","name":"todo_id","in":"path"\}\],"body":null,"result":"json"\}/,
    );
    assert.match(
      js,
      /\{"name":"createTodo","method":"POST","path":"\/todos","parameters":\[\],"body":\{"key":"body","contentType":"application\/json","json":true\},"result":"json"\}/,
    );
  });

  it('escapes every name, string and doc of a hostile interface: the package compiles strict and its JavaScript parses', () => {
    const exported = typescriptExporter.export(hostile(), {});
    const dts = exported.files.find((f) => f.path.endsWith('index.d.ts'))!.contents;
    assert.match(dts, /export interface Promise2 \{\n {2}"it's"\?: "\*\/";\n\}/);
    assert.match(dts, /export declare const delete_: DeleteEndpoint;/);
    assert.match(dts, /readonly "new-thing": 2;/);
    assert.match(dts, / {2}request2\(\): Promise<unknown>;/, 'an operation never takes the name of a member');
    assert.match(dts, / {2}bad\(\): Promise<BadName>;/);
    assert.match(dts, /export interface BadName \{\n {2}"a b"\?: string;\n\}/);
    assert.match(dts, / {2}deleteItem\(args: ApiDeleteItemArguments\): Promise<void>;/);
    assert.match(dts, /@deprecated/);
    assert.match(dts, / {2}upload\(args: ApiUploadArguments\): Promise<string>;/);
    assert.match(
      dts,
      /export interface ApiUploadArguments \{[^}]*body\?: string;[^}]*"x-trace"\?: string;[^}]*body2: string \| Uint8Array;\n\}/,
    );
    assert.match(dts, /export type NewThingConnection = Connection<string \| Uint8Array, unknown>;/);
    const out = tempDir('svc-export-ts-hostile-');
    writeExport(out, exported);
    writeFileSync(
      path.join(out, 'consumer.ts'),
      [
        "import { createClient, delete_, newThing, api, type Promise2 } from './svc-clients/we-ird/index.js';",
        "export const calls = [delete_.request({ 'x\"y': 'a', default: 1 }), newThing.connect(), api.request2(), api.deleteItem({ 'item-id': 1 }), api.upload({ body2: 'text', body: 'q' }), createClient().api.bad()];",
        "export const value: Promise2 = { \"it's\": '*/' };",
      ].join('\n'),
    );
    assert.equal(exported.root, 'svc-clients/we-ird', 'the app name becomes an npm name');
    const checked = tsc(out, ['consumer.ts']);
    assert.equal(checked.status, 0, checked.output);
    for (const file of exported.files.filter((f) => f.path.endsWith('.js'))) {
      const parsed = spawnSync(process.execPath, ['--check', path.join(out, file.path)], { encoding: 'utf8' });
      assert.equal(parsed.status, 0, `${file.path}: ${parsed.stderr}`);
    }
  });
});
