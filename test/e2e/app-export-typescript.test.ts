/**
 * `svc app export --language typescript`, end to end: the examples (and an
 * app with the return shapes they lack) deployed on a real in-process
 * platform, their clients exported by the command, then a project in a fresh
 * folder outside the repo that depends on them (as `npm install <folder>`
 * links them), compiled with `tsc --strict` and run by Node: endpoint calls
 * with their typed results, a streamed answer, a realtime session, the
 * FastAPI app's operations, error answers as SvcError with svc's codes.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import appExport from '../../cli/commands/app-export.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { examplesRoot, packageRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import type { AppInterface } from '../../core/infra/plugin/types.js';
import { capture, rejectsWith } from '../cli/fixture.js';
import { apiClient } from '../core/http/api/client.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { declarationCode, runNode, STRICT_OPTIONS, tsc } from '../plugins/export-typescript/ts-helpers.js';

const KINDS = path.join(packageRoot, 'test', 'fixtures', 'apps', 'export_kinds.py');

/** The project's code: every call it makes prints what it saw, as one JSON object. */
const MAIN = `
import WebSocket from 'ws';
import { CallTimeoutError, createClient, greet, hello, square, SvcError, type GreetArguments, type Greeting } from '@svc-clients/quickstart';
import { work } from '@svc-clients/autoscaling';
import { createClient as chatClient, ConnectionClosedError, type ChatMessage, type Done, type Token, type Typing } from '@svc-clients/realtime-chat';
import { count, raw, total } from '@svc-clients/export-kinds';

const seen: Record<string, unknown> = {};
const failure = (error: unknown): unknown[] => (error instanceof SvcError ? [error.name, error.code, error.status, error.message] : ['not an SvcError', String(error)]);

const greeting: Greeting = await greet.request({ name: 'Ada', excited: true });
seen.greet = greeting;
seen.hello = [await hello.request({ name: 'Bo' }), await hello.request()];
seen.raw = (await greet.raw({ name: 'Ada' })).json();
try {
  await greet.withOptions({ token: null }).request({ name: 'Ada' });
} catch (error) {
  seen.noToken = failure(error);
}
try {
  await createClient({ token: 'svc_' + '0'.repeat(40) }).greet.request({ name: 'Ada' });
} catch (error) {
  seen.badToken = failure(error);
}
try {
  await createClient({ server: 'http://127.0.0.1:9' }).hello.request();
} catch (error) {
  seen.unreachable = failure(error);
}
try {
  square.request({ x: 3 });
} catch (error) {
  seen.square = String(error);
}

const points: { x: number; y: number }[] = [];
for await (const point of count.request({ to: 3 })) points.push(point);
seen.count = points;
const before: number[] = [];
try {
  for await (const point of count.request({ to: 2, fail: true })) before.push(point.x);
} catch (error) {
  seen.streamFailed = [before, ...failure(error).slice(0, 2)];
}
seen.bytes = Array.from(await raw.request({ text: 'hé' }));
seen.total = await total.request({ ids: [1, 2, 39] });

// Prefer: respond-async: the same request kept as a call; get() decodes its kept answer as request() decodes a live one.
const spawned = await greet.spawn({ name: 'Ada', excited: true });
const later: Greeting = await greet.callFromId(spawned.callId).get({ timeoutMs: 60_000 });
const items: { x: number; y: number }[] = [];
for await (const point of await (await count.spawn({ to: 3 })).get()) items.push(point);
const spawnSeen: Record<string, unknown> = { greet: later, status: await spawned.status(), count: items, bytes: Array.from(await (await raw.spawn({ text: 'hé' })).get()) };
try {
  await (await greet.spawn({ name: 7 } as unknown as GreetArguments)).get({ timeoutMs: 60_000 });
} catch (error) {
  spawnSeen.refused = failure(error).slice(0, 3);
}
const held = await work.spawn({ seconds: 20 }); // the autoscaling example sleeps that long: get() gives up first
try {
  await held.get({ timeoutMs: 500 });
} catch (error) {
  spawnSeen.timedOut = error instanceof CallTimeoutError ? [error.name, error.callId === held.callId, error.message] : String(error);
}
await held.cancel();
try {
  await held.get({ timeoutMs: 60_000 });
} catch (error) {
  spawnSeen.cancelled = [...failure(error).slice(0, 3), await held.status()];
}
seen.spawn = spawnSeen;

const chat = chatClient({ WebSocket }).chat;
const session = await chat.connect();
const message: ChatMessage = { user: 'Ada', text: 'hello' };
session.send(message);
const replies: (Typing | Token | Done)[] = [];
for await (const reply of session) {
  replies.push(reply);
  if (reply.type === 'done') break;
}
seen.replies = replies;
session.send({ user: 'Ada' } as unknown as ChatMessage);
try {
  await session.receive();
} catch (error) {
  seen.badMessage = failure(error).slice(0, 2);
}
session.send({ user: 'Bo', text: 'hi' });
seen.again = await session.receive();
await session.close();
try {
  session.send(message);
} catch (error) {
  seen.afterClose = [session.closed, error instanceof ConnectionClosedError];
}
try {
  await chatClient({ WebSocket, token: 'svc_' + '0'.repeat(40) }).chat.connect();
} catch (error) {
  seen.refused = failure(error).slice(0, 3);
}
if (globalThis.WebSocket === undefined) {
  try {
    await chatClient().chat.connect();
  } catch (error) {
    seen.noWebSocket = String(error);
  }
}
ASGI
console.log(JSON.stringify(seen));
`;

const ASGI = `
const { api } = await import('@svc-clients/asgi-fastapi');
const created = await api.createTodo({ body: { title: 'write the docs' } });
const fetched = await api.getTodo({ todo_id: created.id });
const listed = await api.listTodos({ done: false });
let missing: unknown[] = [];
try {
  await api.getTodo({ todo_id: 999 });
} catch (error) {
  missing = [...failure(error).slice(1, 3), error instanceof SvcError ? error.details : null];
}
const generic = await api.request('GET', '/todos/' + created.id, { headers: { 'x-test': '1' } });
const socket = await api.withOptions({ WebSocket }).connect('/ws');
socket.send('buy milk');
const frame = await socket.receive();
await socket.close();
seen.asgi = { created, same: JSON.stringify(fetched) === JSON.stringify(created), listed: listed.map((todo) => todo.id), missing, generic: [generic.status, generic.json()], frame: typeof frame === 'string' ? JSON.parse(frame).title : null };
`;

describe('svc app export --language typescript: a typed ESM package, used from a project elsewhere', function () {
  this.timeout(600_000);
  let platform: Platform;
  let env: Record<string, string>;
  let fastapi = true;
  /** What the project's run printed. */
  let seen: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- parsed JSON, asserted field by field
  const out = tempDir('svc-export-ts-out-');
  const project = tempDir('svc-export-ts-project-');
  const run = () => capture({ env, cwd: out });

  const deploy = async (target: string) => {
    const manifest = await loadManifest({ target });
    await platform.deployments.deploy({
      spec: manifest.spec,
      source: { root: manifest.root, entry: manifest.spec.entry },
      workspace: DEFAULT_WORKSPACE,
      stage: 'deployed',
      principal: null,
    });
    return manifest.spec.name;
  };

  before(async () => {
    platform = await startPlatform({ config: testConfig(), report: () => {} });
    env = { SVC_SERVER: platform.url, SVC_TOKEN: platform.ownerToken.secret };
    // autoscaling: its endpoint sleeps as long as asked, a call that is still running for spawn()'s tests.
    for (const target of ['quickstart', 'realtime-chat', 'autoscaling'].map((app) => path.join(examplesRoot, app, 'app.py')).concat(KINDS))
      await deploy(target);
    try {
      await deploy(path.join(examplesRoot, 'asgi-fastapi', 'app.py'));
    } catch (error) {
      // The CLI imports the app to read it, so FastAPI must be installed where the tests run.
      if (!/No module named 'fastapi'/.test((error as Error).message)) throw error;
      fastapi = false;
    }
  });
  after(async () => platform?.close());

  it('writes svc-clients/<app>/ with package.json first, and prints how to import it', async () => {
    const exported = run();
    const result = await appExport(exported.context, 'quickstart', { out, language: 'typescript' });
    assert.equal(result.package, '@svc-clients/quickstart');
    assert.equal(result.root, path.join(out, 'svc-clients', 'quickstart'));
    assert.deepEqual(
      result.files.map((file) => path.relative(result.root, file)),
      ['package.json', 'index.js', 'index.d.ts', 'runtime.js', 'runtime.d.ts', 'errors.js', 'errors.d.ts'],
    );
    assert.match(
      exported.stderr(),
      /generated the typescript client of quickstart \(greet v1, hello v1, square v1\) as @svc-clients\/quickstart/,
    );
    assert.match(exported.stdout(), /import \{ createClient, greet \} from '\.\/svc-clients\/quickstart\/index\.js';/);
    assert.match(
      exported.stdout(),
      /npm install .*\/svc-clients\/quickstart, then import \{ createClient, greet \} from '@svc-clients\/quickstart'/,
    );
    const manifest = JSON.parse(readFileSync(path.join(result.root, 'package.json'), 'utf8'));
    assert.deepEqual(Object.keys(manifest).slice(0, 2), ['description', 'name']);
    assert.match(manifest.description, /^Generated by `svc app export` from the deployed app quickstart \(greet v1, hello v1, square v1\)/);
    assert.deepEqual([manifest.type, manifest.exports], ['module', { '.': { types: './index.d.ts', default: './index.js' } }]);
    assert.equal(manifest.dependencies, undefined);
  });

  it('exports every example and the all-kinds app (every kind and return shape) into packages tsc --strict compiles, with no any in their declarations', async () => {
    await deploy(path.join(examplesRoot, 'checkpointed-model', 'app.py'));
    const apps = ['autoscaling', 'checkpointed-model'];
    await deploy(path.join(packageRoot, 'test', 'fixtures', 'apps', 'all_kinds.py'));
    const exported = [...apps, 'all-kinds', 'quickstart', 'realtime-chat', ...(fastapi ? ['asgi-fastapi'] : [])];
    const dir = tempDir('svc-export-ts-all-');
    const declarations: string[] = [];
    for (const app of exported) {
      const result = await appExport(run().context, app, { out: dir, language: 'typescript' });
      declarations.push(...result.files.filter((file) => file.endsWith('.d.ts')));
    }
    const compiled = tsc(
      dir,
      [...declarations, ...declarations.map((file) => file.replace(/\.d\.ts$/, '.js'))].map((file) => path.relative(dir, file)),
      { ...STRICT_OPTIONS, allowJs: true, checkJs: false, noEmit: true },
    );
    assert.equal(compiled.status, 0, compiled.output);
    for (const file of declarations) assert.doesNotMatch(declarationCode(readFileSync(file, 'utf8')), /\bany\b/, file);
  });

  it('lists typescript beside python for an unknown --language', async () => {
    const refused = await rejectsWith(appExport(run().context, 'quickstart', { out, language: 'nope' }));
    assert.equal(refused.code, 'usage_invalid');
    assert.match(refused.message, /no exporter for --language "nope"; the exporters here are python, typescript$/);
  });

  it('--check, the record and safe regeneration work for its layout: an edited file stops the export, a redeploy makes --check fail', async () => {
    const checked = run();
    assert.equal(await appExport(checked.context, 'quickstart', { out, language: 'typescript', check: true }), 0);
    assert.ok(existsSync(path.join(out, 'svc-clients', 'quickstart', '.svc-export.json')));
    const index = path.join(out, 'svc-clients', 'quickstart', 'index.d.ts');
    const generated = readFileSync(index, 'utf8');
    writeFileSync(index, `${generated}\n// my tweak\n`);
    const edited = await rejectsWith(appExport(run().context, 'quickstart', { out, language: 'typescript' }));
    assert.equal(edited.code, 'conflict');
    assert.match(edited.message, /index\.d\.ts was changed after svc app export wrote it/);
    const stale = run();
    assert.equal(await appExport(stale.context, 'quickstart', { out, language: 'typescript', check: true }), 1);
    assert.match(stale.stdout(), /svc-clients\/quickstart\/index\.d\.ts differs/);
    await appExport(run().context, 'quickstart', { out, language: 'typescript', force: true });
    assert.equal(readFileSync(index, 'utf8'), generated);
    const stray = path.join(out, 'svc-clients', 'quickstart', 'mine.ts');
    writeFileSync(stray, 'export {};\n');
    const inTheWay = await rejectsWith(appExport(run().context, 'quickstart', { out, language: 'typescript' }));
    assert.match(inTheWay.message, /mine\.ts is in the way, which svc app export did not write/);
    rmSync(stray);

    // The app changes: greet takes another parameter; the checked-in client no longer matches.
    const changedDir = tempDir('svc-export-ts-changed-');
    const source = readFileSync(path.join(examplesRoot, 'quickstart', 'app.py'), 'utf8');
    writeFileSync(path.join(changedDir, 'app.py'), source.replace('def greet(name: str', 'def greet(title: str, name: str'));
    await deploy(path.join(changedDir, 'app.py'));
    try {
      const outdated = run();
      assert.equal(await appExport(outdated.context, 'quickstart', { out, language: 'typescript', check: true }), 1);
      assert.match(outdated.stdout(), /svc-clients\/quickstart\/index\.d\.ts differs/);
    } finally {
      await deploy(path.join(examplesRoot, 'quickstart', 'app.py'));
      await appExport(run().context, 'quickstart', { out, language: 'typescript' });
    }
  });

  it('compiles strict in a project outside the repo and calls the deployments: results, a stream, spawn() and get(), a realtime session, operations, typed errors', async () => {
    for (const app of ['realtime-chat', 'export-kinds', 'autoscaling'])
      await appExport(run().context, app, { out, language: 'typescript' });
    if (fastapi) {
      await appExport(run().context, 'asgi-fastapi', { out, language: 'typescript' });
      const iface = (await apiClient(platform.url)('GET', '/api/v1/apps/asgi-fastapi/interface', { token: platform.ownerToken.secret }))
        .json as AppInterface;
      // The operations come from the description the deploy read from the running app.
      assert.deepEqual(
        iface.workloads.find((w) => w.kind === 'asgi')?.api?.operations.map((o) => o.name),
        ['list_todos', 'create_todo', 'get_todo', 'delete_todo'],
      );
    }
    // As `npm install <folder>` leaves them: links in node_modules; ws and the Node types as the project would install them.
    const modules = path.join(project, 'node_modules');
    mkdirSync(path.join(modules, '@svc-clients'), { recursive: true });
    mkdirSync(path.join(modules, '@types'), { recursive: true });
    for (const app of ['quickstart', 'realtime-chat', 'export-kinds', 'autoscaling', ...(fastapi ? ['asgi-fastapi'] : [])])
      symlinkSync(path.join(out, 'svc-clients', app), path.join(modules, '@svc-clients', app));
    symlinkSync(path.join(packageRoot, 'node_modules', 'ws'), path.join(modules, 'ws'));
    for (const types of ['node', 'ws'])
      symlinkSync(path.join(packageRoot, 'node_modules', '@types', types), path.join(modules, '@types', types));
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    writeFileSync(path.join(project, 'main.ts'), MAIN.replace('ASGI', fastapi ? ASGI : ''));

    const compiled = tsc(project, ['main.ts'], { ...STRICT_OPTIONS, types: ['node'], lib: ['ES2022'], outDir: '.' });
    assert.equal(compiled.status, 0, compiled.output);
    const ran = await runNode('main.js', project, {
      PATH: process.env.PATH ?? '',
      SVC_SERVER: platform.url,
      SVC_TOKEN: platform.ownerToken.secret,
    });
    assert.equal(ran.code, 0, ran.stderr);
    seen = JSON.parse(ran.stdout);

    assert.deepEqual(seen.greet, { message: 'Hello, Ada!', length: 11 });
    assert.deepEqual(seen.hello, [{ message: 'Hello, Bo!' }, { message: 'Hello, world!' }]);
    assert.deepEqual(seen.raw, { message: 'Hello, Ada.', length: 11 });
    assert.deepEqual(seen.noToken.slice(0, 3), ['SvcError', 'unauthorized', 401]);
    assert.deepEqual(seen.badToken.slice(0, 3), ['SvcError', 'unauthorized', 401]);
    assert.deepEqual(seen.unreachable.slice(0, 3), ['SvcError', 'server_unreachable', 503]);
    assert.match(seen.square, /^TypeError: square is a function of quickstart: it has no URL/);
    assert.deepEqual(seen.count, [
      { x: 0, y: 0 },
      { x: 1, y: 1 },
      { x: 2, y: 4 },
    ]);
    assert.deepEqual(seen.streamFailed, [[0, 1], 'SvcError', 'handler_error']);
    assert.deepEqual(seen.bytes, [...Buffer.from('hé')]);
    assert.equal(seen.total, 42);
    const { timedOut, ...spawn } = seen.spawn;
    assert.deepEqual(timedOut.slice(0, 2), ['CallTimeoutError', true]);
    assert.match(
      timedOut[2],
      /^the call call-[0-9a-f]{20} has not ended within 0\.5 s \(it is (queued|running)\); get\(\) it again later$/,
    );
    assert.deepEqual(
      spawn,
      {
        greet: seen.greet,
        status: 'succeeded',
        count: seen.count,
        bytes: seen.bytes,
        refused: ['SvcError', 'invalid_arguments', 422],
        cancelled: ['SvcError', 'call_cancelled', 409, 'cancelled'],
      },
      'spawn(): the same typed answers and errors, a time-out and a cancel',
    );

    const words = 'Hello Ada, nice to meet you!'.split(' ');
    assert.deepEqual(seen.replies, [
      { type: 'typing', to: 'Ada' },
      ...words.map((text) => ({ type: 'token', text })),
      { type: 'done', words: 6 },
    ]);
    assert.deepEqual(seen.badMessage, ['SvcError', 'invalid_arguments']);
    assert.deepEqual(seen.again, { type: 'typing', to: 'Bo' });
    assert.deepEqual(seen.afterClose, [true, true]);
    assert.deepEqual(seen.refused, ['SvcError', 'unauthorized', 401]);
    if (globalThis.WebSocket === undefined) assert.match(seen.noWebSocket, /connect\(\) needs a WebSocket class .* the ws package/);
  });

  it("calls the FastAPI app's operations with their own types (getTodo, createTodo, listTodos), an error answer as SvcError not_found; request() and connect() for the rest", function () {
    if (!fastapi) this.skip();
    {
      const { created, same, listed, missing, generic, frame } = seen.asgi;
      assert.deepEqual(created, {
        title: 'write the docs',
        done: false,
        id: created.id,
        href: `/default/asgi-fastapi/api/todos/${created.id}`,
      });
      assert.equal(same, true);
      assert.ok(listed.includes(created.id));
      assert.deepEqual(missing, ['not_found', 404, { detail: 'no todo 999' }]);
      assert.deepEqual(generic, [200, created]);
      assert.equal(frame, 'buy milk');
    }
  });
});
