/**
 * `svc app export`, end to end: example apps deployed on a real in-process
 * platform, their interface read over the API, the command run in-process
 * into a temporary folder, and the generated package imported by a fresh
 * `python3` in ANOTHER folder that calls the deployed app over HTTP and
 * WebSocket with SVC_SERVER/SVC_TOKEN or the credentials of `svc login`.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import appExport from '../../cli/commands/app-export.js';
import { loadManifest, type LoadedManifest } from '../helpers/fixture-manifests.js';
import { examplesRoot, packageRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import { capture, rejectsWith } from '../cli/fixture.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { tokenFor } from '../core/http/api/platform.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { printed, pythonPath, pythonWithWebsockets, runPython } from '../plugins/export-python/python-helpers.js';

const manifestOf = (name: string): Promise<LoadedManifest> => loadManifest({ target: path.join(examplesRoot, name, 'app.py') });

describe('svc app export: typed Python clients of deployed apps', function () {
  this.timeout(300_000);
  let platform: Platform;
  let call: Call;
  let env: Record<string, string>;
  const reports: unknown[] = [];
  const out = tempDir('svc-export-out-');
  const elsewhere = tempDir('svc-export-elsewhere-');
  const run = (options: Parameters<typeof capture>[0] = {}) => capture({ env, cwd: elsewhere, ...options });
  const deploy = async (name: string, stage: 'deployed' | 'preview' = 'deployed') => {
    const manifest = await manifestOf(name);
    return platform.deployments.deploy({
      spec: manifest.spec,
      source: { root: manifest.root, entry: manifest.spec.entry },
      workspace: DEFAULT_WORKSPACE,
      stage,
      principal: null,
    });
  };
  /** The client's calls from a fresh Python in another folder: only SVC_SERVER and SVC_TOKEN, no files of ours. */
  const clientEnv = (extra: Record<string, string> = {}) => ({
    PYTHONPATH: pythonPath(out),
    SVC_SERVER: platform.url,
    SVC_TOKEN: platform.ownerToken.secret,
    SVC_CONFIG_DIR: tempDir('svc-config-'),
    ...extra,
  });

  before(async () => {
    platform = await startPlatform({ config: testConfig(), report: (error) => reports.push(error) });
    call = apiClient(platform.url);
    env = { SVC_SERVER: platform.url, SVC_TOKEN: platform.ownerToken.secret };
    await deploy('quickstart');
  });
  after(async () => platform?.close());
  afterEach(() => assert.deepEqual(reports, [], 'no unexpected errors'));

  describe('GET /api/v1/apps/:app/interface', () => {
    it('describes every deployed workload: kind, doc, URLs, route, methods, access, schemas, status and versions', async () => {
      const answer = await call('GET', '/api/v1/apps/quickstart/interface', { token: platform.ownerToken.secret });
      assert.equal(answer.status, 200);
      const { app, generatedFrom, workloads } = answer.json;
      assert.equal(app, 'quickstart');
      assert.deepEqual(generatedFrom, { versions: { greet: 1, hello: 1, square: 1 } });
      assert.deepEqual(
        workloads.map((w: { name: string; kind: string }) => [w.name, w.kind]),
        [
          ['greet', 'endpoint'],
          ['hello', 'endpoint'],
          ['square', 'function'],
        ],
      );
      const [greet, hello, square] = workloads;
      assert.deepEqual(Object.keys(greet), [
        'name',
        'kind',
        'doc',
        'url',
        'path',
        'hostUrl',
        'methods',
        'route',
        'authorized',
        'parameters',
        'returns',
        'status',
        'api',
      ]);
      assert.equal(greet.api, null);
      assert.deepEqual(
        {
          doc: greet.doc,
          url: greet.url,
          path: greet.path,
          methods: greet.methods,
          route: greet.route,
          authorized: greet.authorized,
          status: greet.status,
        },
        {
          doc: 'Greets someone by name.',
          url: `${platform.url}/default/quickstart/greet/greet`,
          path: '/default/quickstart/greet/greet',
          methods: ['POST'],
          route: '/greet',
          authorized: true,
          status: 'running',
        },
      );
      assert.equal(greet.returns.title, 'Greeting');
      assert.deepEqual(greet.parameters.required, ['name']);
      assert.equal(hello.authorized, false);
      assert.deepEqual(
        { url: square.url, path: square.path, route: square.route, methods: square.methods, status: square.status },
        { url: null, path: null, route: null, methods: [], status: 'not_served' },
      );
    });

    it('answers the deployed stage only, and 404 for an unknown app or one of another workspace; 401 without a token', async () => {
      assert.equal((await call('GET', '/api/v1/apps/nothing-here/interface', { token: platform.ownerToken.secret })).status, 404);
      const acme = await tokenFor(platform, 'acme');
      const foreign = await call('GET', '/api/v1/apps/quickstart/interface', { token: acme.secret });
      assert.equal(foreign.status, 404);
      assert.equal(foreign.json.error.code, 'not_found');
      assert.equal((await call('GET', '/api/v1/apps/quickstart/interface')).status, 401);
      assert.equal((await call('GET', '/api/v1/apps/Bad_Name/interface', { token: platform.ownerToken.secret })).status, 422);
    });
  });

  describe('svc app export quickstart', () => {
    it('writes svc_clients/quickstart into --out and prints the files and how to import it', async () => {
      const exported = run();
      const result = await appExport(exported.context, 'quickstart', { out });
      assert.equal(result.package, 'svc_clients.quickstart');
      assert.equal(result.root, path.join(out, 'svc_clients', 'quickstart'));
      for (const file of [
        '__init__.py',
        'quickstart/__init__.py',
        'quickstart/_workloads.py',
        'quickstart/_models.py',
        'quickstart/_runtime.py',
        'quickstart/_decode.py',
        'quickstart/_websocket.py',
        'quickstart/py.typed',
      ]) {
        assert.ok(existsSync(path.join(out, 'svc_clients', file)), file);
        assert.match(exported.stdout(), new RegExp(`wrote .*svc_clients/${file.replace('.', '\\.')}\\n`));
      }
      assert.match(exported.stdout(), /from svc_clients\.quickstart import greet/);
      assert.match(exported.stdout(), new RegExp(`PYTHONPATH=${out}`));
      assert.match(
        exported.stderr(),
        /generated the python client of quickstart \(greet v1, hello v1, square v1\) as svc_clients\.quickstart/,
      );
      assert.match(exported.stderr(), /square is a function: the client cannot call it; call square\.remote\(\)/);
      assert.match(
        readFileSync(path.join(out, 'svc_clients', 'quickstart', '_workloads.py'), 'utf8'),
        /^# Generated by `svc app export` from the deployed app quickstart: greet v1, hello v1, square v1\.\n/,
      );
    });

    it('gives a fresh python3 in another folder typed calls: a Greeting dataclass, the signature and the docstring', async () => {
      const script = `
import dataclasses, inspect, json, os
from svc_clients.quickstart import Greeting, greet, hello, square
import svc_clients.quickstart as package

result = greet.request(name="Ada", excited=True)
seen = {
    "cwd": os.getcwd(),
    "module": package.__file__,
    "type": type(result).__name__,
    "is_greeting": isinstance(result, Greeting) and dataclasses.is_dataclass(result),
    "fields": [field.name for field in dataclasses.fields(Greeting)],
    "greet": dataclasses.asdict(result),
    "positional": dataclasses.asdict(greet.request("Ada")),
    "hello": hello.request(name="Bo"),
    "hello_default": hello.request(),
    "signature": str(inspect.signature(greet.request)),
    "hello_signature": str(inspect.signature(hello.request)),
    "doc": greet.__doc__,
    "request_doc": greet.request.__doc__,
    "raw": greet.raw(name="Ada").json(),
    "generated_from": package.GENERATED_FROM,
}
try:
    square.request(3)
except TypeError as error:
    seen["square"] = str(error)
print(json.dumps(seen))
`;
      const seen = printed(await runPython(script, { cwd: elsewhere, env: clientEnv() }));
      assert.equal(seen.cwd, elsewhere);
      assert.equal(seen.module, path.join(out, 'svc_clients', 'quickstart', '__init__.py'));
      assert.equal(seen.type, 'Greeting');
      assert.equal(seen.is_greeting, true);
      assert.deepEqual(seen.fields, ['message', 'length']);
      assert.deepEqual(seen.greet, { message: 'Hello, Ada!', length: 11 });
      assert.deepEqual(seen.positional, { message: 'Hello, Ada.', length: 11 });
      assert.deepEqual(seen.hello, { message: 'Hello, Bo!' });
      assert.deepEqual(seen.hello_default, { message: 'Hello, world!' });
      assert.equal(seen.signature, '(name: str, excited: bool = False) -> svc_clients.quickstart._models.Greeting');
      assert.equal(seen.hello_signature, "(name: str = 'world') -> dict[str, typing.Any]");
      assert.equal(seen.doc, 'Greets someone by name.');
      assert.match(seen.request_doc, /^Greets someone by name\.\n\n {8}Calls POST \/greet of quickstart/);
      assert.deepEqual(seen.raw, { message: 'Hello, Ada.', length: 11 });
      assert.deepEqual(seen.generated_from, { versions: { greet: 1, hello: 1, square: 1 } });
      assert.match(seen.square, /square is a function of quickstart: .*\.remote\(/);
    });

    it('uses the credentials of svc login, looked up at each call; a refused token raises svc.UnauthorizedError', async () => {
      const config = tempDir('svc-config-');
      writeFileSync(
        path.join(config, 'credentials.json'),
        JSON.stringify({ version: 1, server: platform.url, token: platform.ownerToken.secret }),
        { mode: 0o600 },
      );
      const script = `
import json, os, svc
from svc_clients.quickstart import greet, hello
seen = {"from_login": greet.request(name="Cy").message}
os.environ["SVC_TOKEN"] = "svc_" + "0" * 40  # a token that does not exist: read at the next call
try:
    greet.request(name="Cy")
except svc.UnauthorizedError as error:
    seen["refused"] = [type(error).__name__, error.code, error.status]
try:
    greet.raw(name="Cy").raise_for_status()
except svc.UnauthorizedError as error:
    seen["raw_refused"] = error.code
seen["public"] = hello.request(name="Di")
print(json.dumps(seen))
`;
      const seen = printed(await runPython(script, { cwd: elsewhere, env: { PYTHONPATH: pythonPath(out), SVC_CONFIG_DIR: config } }));
      assert.deepEqual(seen, {
        from_login: 'Hello, Cy.',
        refused: ['UnauthorizedError', 'unauthorized', 401],
        raw_refused: 'unauthorized',
        public: { message: 'Hello, Di!' },
      });
    });

    it('calls a public endpoint with no token at all, on the server it was generated from', async () => {
      const script = 'import json\nfrom svc_clients.quickstart import hello\nprint(json.dumps(hello.request(name="Ed")))';
      const seen = printed(
        await runPython(script, {
          cwd: elsewhere,
          env: { PYTHONPATH: pythonPath(out), SVC_CONFIG_DIR: tempDir('svc-config-'), SVC_DATA_DIR: tempDir('svc-data-') },
        }),
      );
      assert.deepEqual(seen, { message: 'Hello, Ed!' });
    });

    it('--json prints the package, root, files and versions; exporting again replaces that app only', async () => {
      const mine = path.join(out, 'svc_clients', 'notes.txt');
      writeFileSync(mine, 'my own file');
      const again = run();
      const result = await appExport(again.context, 'quickstart', { out, json: true });
      const printedJson = JSON.parse(again.stdout());
      assert.deepEqual(printedJson, JSON.parse(JSON.stringify(result)));
      assert.deepEqual(Object.keys(printedJson), ['app', 'language', 'package', 'root', 'files', 'generatedFrom']);
      assert.equal(printedJson.files.length, 7, 'svc_clients/__init__.py is unchanged, so not written again');
      assert.equal(readFileSync(mine, 'utf8'), 'my own file');
    });

    it('refuses to replace a folder holding a file it did not write, and an unknown --language', async () => {
      const stray = path.join(out, 'svc_clients', 'quickstart', 'mine.py');
      writeFileSync(stray, 'x = 1\n');
      const refused = await rejectsWith(appExport(run().context, 'quickstart', { out }));
      assert.equal(refused.code, 'conflict');
      assert.match(refused.message, /mine\.py is in the way, which svc app export did not write/);
      assert.ok(existsSync(stray));
      const language = await rejectsWith(appExport(run().context, 'quickstart', { out, language: 'cobol' }));
      assert.equal(language.code, 'usage_invalid');
      assert.match(language.message, /no exporter for --language "cobol"; the exporters here are python/);
      await rm(stray);

      const shared = path.join(out, 'svc_clients', '__init__.py');
      const original = readFileSync(shared, 'utf8');
      writeFileSync(shared, '# mine\n');
      const kept = run();
      await appExport(kept.context, 'quickstart', { out });
      assert.equal(readFileSync(shared, 'utf8'), '# mine\n');
      assert.match(kept.stderr(), /left .*svc_clients\/__init__\.py as it is: it is not the file svc app export writes/);
      writeFileSync(shared, original);
    });

    it("runs an exporter a plugin registers (--plugin, or the config's plugins): the recipe's .http file, whose request answers", async () => {
      const recipe = path.join(packageRoot, 'docs', 'recipes', 'export-http-file.js');
      const unknown = await rejectsWith(appExport(run().context, 'quickstart', { out, language: 'http-file' }));
      assert.match(unknown.message, /no exporter for --language "http-file"; the exporters here are python, typescript$/);
      assert.match(unknown.hint ?? '', /add the plugin that registers "http-file" \(the config's plugins, or --plugin <module>\)/);
      const exported = run();
      await appExport(exported.context, 'quickstart', { out, language: 'http-file', plugin: recipe });
      const file = readFileSync(path.join(out, 'http', 'quickstart', 'quickstart.http'), 'utf8');
      assert.match(file, /^# Generated by `svc app export`/);
      assert.match(file, new RegExp(`@server = ${platform.url}`));
      // Send greet's request as an editor would: the variables filled in, the example body edited.
      const greet =
        /### greet\n# [^\n]*\n(POST) \{\{server\}\}(\S+)\nAuthorization: Bearer \{\{token\}\}\nContent-Type: application\/json\n\n(\{[\s\S]*?\n\})/.exec(
          file,
        );
      assert.ok(greet, file);
      const body = { ...JSON.parse(greet[3]!), name: 'Ada' };
      const answer = await fetch(`${platform.url}${greet[2]}`, {
        method: greet[1],
        headers: { Authorization: `Bearer ${platform.ownerToken.secret}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(answer.status, 200, await answer.clone().text());
      assert.match(((await answer.json()) as { message: string }).message, /Ada/);
      const config = path.join(tempDir('svc-export-config-'), 'svc.json');
      writeFileSync(config, JSON.stringify({ plugins: [recipe] }));
      await appExport(run().context, 'quickstart', { out, language: 'http-file', config });
      await rm(path.join(out, 'http'), { recursive: true });
    });

    it('--check exits 0 while the client matches the deployment and 1 after a redeploy changed a signature; an edited file is never overwritten silently', async () => {
      await appExport(run().context, 'quickstart', { out });
      const current = run();
      assert.equal(await appExport(current.context, 'quickstart', { out, check: true }), 0);
      assert.match(current.stderr(), /the client of quickstart in .* is what the deployed app gives now/);

      // A file of the export edited by hand, header kept: the next export stops, --force replaces it.
      const workloads = path.join(out, 'svc_clients', 'quickstart', '_workloads.py');
      const generated = readFileSync(workloads, 'utf8');
      writeFileSync(workloads, `${generated}\n# my tweak\n`);
      const edited = await rejectsWith(appExport(run().context, 'quickstart', { out }));
      assert.equal(edited.code, 'conflict');
      assert.match(edited.message, /_workloads\.py was changed after svc app export wrote it/);
      assert.match(readFileSync(workloads, 'utf8'), /# my tweak/, 'nothing was written');
      const stale = run();
      assert.equal(await appExport(stale.context, 'quickstart', { out, check: true }), 1);
      assert.match(stale.stdout(), /svc_clients\/quickstart\/_workloads\.py differs/);
      await appExport(run().context, 'quickstart', { out, force: true });
      assert.equal(readFileSync(workloads, 'utf8'), generated);

      // The app changes: greet takes another parameter. The checked-in client no longer matches.
      const project = tempDir('svc-export-changed-');
      const source = readFileSync(path.join(examplesRoot, 'quickstart', 'app.py'), 'utf8');
      const changed = source.replace('def greet(name: str', 'def greet(title: str, name: str');
      assert.notEqual(changed, source, 'the example still has greet(name: str, …)');
      writeFileSync(path.join(project, 'app.py'), changed);
      const manifest = await loadManifest({ target: path.join(project, 'app.py') });
      await platform.deployments.deploy({
        spec: manifest.spec,
        source: { root: manifest.root, entry: manifest.spec.entry },
        workspace: DEFAULT_WORKSPACE,
        stage: 'deployed',
        principal: null,
      });
      try {
        const outdated = run();
        assert.equal(await appExport(outdated.context, 'quickstart', { out, check: true }), 1);
        assert.match(outdated.stdout(), /svc_clients\/quickstart\/_workloads\.py differs/);
        assert.match(outdated.stderr(), /the client of quickstart is out of date: run svc app export quickstart --out .* again/);
      } finally {
        await deploy('quickstart');
      }
    });

    it('fails with not_found for an app that is not deployed (a preview is not enough)', async () => {
      await deploy('realtime-chat', 'preview');
      const missing = await rejectsWith(appExport(run().context, 'realtime-chat', { out }));
      assert.equal(missing.code, 'not_found');
      assert.ok(!existsSync(path.join(out, 'svc_clients', 'realtime_chat')));
    });

    it('raises svc.NotFoundError once the deployment is gone', async () => {
      const deleted = await call('DELETE', '/api/v1/apps/quickstart/deployments/greet', { token: platform.ownerToken.secret });
      assert.equal(deleted.status, 204);
      const script = `
import json, svc
from svc_clients.quickstart import greet
try:
    greet.request(name="Ada")
except svc.NotFoundError as error:
    print(json.dumps([type(error).__name__, error.code, error.status]))
`;
      assert.deepEqual(printed(await runPython(script, { cwd: elsewhere, env: clientEnv() })), ['NotFoundError', 'not_found', 404]);
    });
  });

  describe('an ASGI app (examples/asgi-fastapi)', () => {
    before(async function () {
      try {
        await deploy('asgi-fastapi');
      } catch (error) {
        // The CLI imports the app to read it, so FastAPI must be installed where the tests run.
        if (/No module named 'fastapi'/.test((error as Error).message)) this.skip();
        throw error;
      }
      await appExport(run().context, 'asgi-fastapi', { out });
    });

    it('keeps the generic request(method, path, json=, params=, headers=): the response as it came', async () => {
      const script = `
import json
from svc_clients.asgi_fastapi import api
created = api.request("POST", "/todos", json={"title": "write the docs"})
todo = created.json()
fetched = api.request("GET", f"/todos/{todo['id']}", headers={"X-Test": "1"})
missing = api.request("GET", "/todos/999")
listed = api.request("GET", "/todos", params={"unused": ["a", "b"]})
print(json.dumps({"created": created.status_code, "title": todo["title"], "fetched": fetched.json() == todo,
                  "missing": [missing.status_code, missing.json()], "listed": [t["id"] for t in listed.json()],
                  "doc": api.__doc__.splitlines()[0]}))
`;
      const seen = printed(await runPython(script, { cwd: elsewhere, env: clientEnv() }));
      assert.deepEqual(seen, {
        created: 201,
        title: 'write the docs',
        fetched: true,
        missing: [404, { detail: 'no todo 999' }],
        listed: [1],
        doc: 'The ASGI app api of asgi-fastapi: every route of the app, under its URL.',
      });
    });

    it("connect(path) opens the app's own WebSocket route, frames as they come", async function () {
      const websocketPython = pythonWithWebsockets();
      if (websocketPython === null) this.skip();
      const script = `
import json
from svc_clients.asgi_fastapi import api
with api.connect("/ws") as session:
    session.send("buy milk")
    todo = session.receive_json(timeout=60)
    session.send("")
    raw = session.receive(timeout=60)
print(json.dumps({"title": todo["title"], "raw": type(raw).__name__, "error": json.loads(raw)["error"]}))
`;
      const seen = printed(await runPython(script, { cwd: elsewhere, env: clientEnv(), python: websocketPython! }));
      assert.equal(seen.title, 'buy milk');
      assert.equal(seen.raw, 'str');
      assert.match(seen.error, /at least 1 character/);
    });
  });

  describe('a realtime handler (examples/realtime-chat)', () => {
    let websocketPython: string | null;
    before(async () => {
      await deploy('realtime-chat');
      await appExport(run().context, 'realtime-chat', { out });
      websocketPython = pythonWithWebsockets();
    });

    it('connect() sends a typed ChatMessage and receives the streamed replies as Typing, Token and Done dataclasses', async function () {
      if (websocketPython === null) this.skip();
      const script = `
import dataclasses, json, svc
from svc_clients.realtime_chat import ChatMessage, Done, Token, Typing, chat
replies = []
with chat.connect() as session:
    session.send(ChatMessage(user="Ada", text="hello"))
    while not replies or not isinstance(replies[-1], Done):
        replies.append(session.receive(timeout=60))
    session.send({"user": "Ada"})
    try:
        session.receive(timeout=60)
    except svc.InvalidRequestError as error:
        refused = [type(error).__name__, error.code]
    session.send(ChatMessage(user="Bo", text="hi"))
    again = session.receive(timeout=60)
print(json.dumps({"types": [type(r).__name__ for r in replies], "replies": [dataclasses.asdict(r) for r in replies],
                  "refused": refused, "again": [type(again).__name__, dataclasses.asdict(again)]}))
`;
      const seen = printed(await runPython(script, { cwd: elsewhere, env: clientEnv(), python: websocketPython! }));
      const words = 'Hello Ada, nice to meet you!'.split(' ');
      assert.deepEqual(seen.types, ['Typing', ...words.map(() => 'Token'), 'Done']);
      assert.deepEqual(seen.replies, [
        { type: 'typing', to: 'Ada' },
        ...words.map((text) => ({ type: 'token', text })),
        { type: 'done', words: 6 },
      ]);
      assert.deepEqual(seen.refused, ['InvalidRequestError', 'invalid_arguments']);
      assert.deepEqual(seen.again, ['Typing', { type: 'typing', to: 'Bo' }]);
    });

    it('refuses the WebSocket with svc.UnauthorizedError for a refused token', async function () {
      if (websocketPython === null) this.skip();
      const script =
        'import json, svc\nfrom svc_clients.realtime_chat import chat\ntry:\n    chat.connect()\nexcept svc.UnauthorizedError as error:\n    print(json.dumps([error.code, error.status]))';
      const seen = printed(
        await runPython(script, { cwd: elsewhere, env: clientEnv({ SVC_TOKEN: `svc_${'0'.repeat(40)}` }), python: websocketPython! }),
      );
      assert.deepEqual(seen, ['unauthorized', 401]);
    });

    it('says to install websockets when it is missing, and the rest of the client still imports', async () => {
      const script = `
import json, sys
sys.modules["websockets"] = None  # as if it were not installed
from svc_clients.realtime_chat import chat
try:
    chat.connect()
except ImportError as error:
    print(json.dumps(str(error)))
`;
      assert.match(
        printed(await runPython(script, { cwd: elsewhere, env: clientEnv() })),
        /connect\(\) needs the websockets package, version 11 or newer \(pip install websockets\)/,
      );
    });
  });
});
