/**
 * An ASGI app's OpenAPI description, end to end: deployed on a real
 * in-process platform, the deploy reads /openapi.json from the running
 * FastAPI app and keeps it, the interface carries its operations, and the
 * exported client's typed methods (`api.create_todo(...)`) call the
 * deployment from a fresh python3 in another folder. An app with the option
 * off, or with nothing at its path, keeps only `request()`; `--check` sees a
 * redeploy that changed an operation's signature.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import appExport from '../../cli/commands/app-export.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { examplesRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import { capture } from '../cli/fixture.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { printed, pythonPath, runPython } from '../plugins/export-python/python-helpers.js';

const exampleSource = readFileSync(path.join(examplesRoot, 'asgi-fastapi', 'app.py'), 'utf8');

describe('svc app export: a method per operation of an ASGI app (examples/asgi-fastapi)', function () {
  this.timeout(300_000);
  let platform: Platform;
  let call: Call;
  const reports: unknown[] = [];
  const out = tempDir('svc-export-ops-out-');
  const elsewhere = tempDir('svc-export-ops-elsewhere-');
  const run = () => capture({ env: { SVC_SERVER: platform.url, SVC_TOKEN: platform.ownerToken.secret }, cwd: elsewhere });
  const clientEnv = () => ({
    PYTHONPATH: pythonPath(out),
    SVC_SERVER: platform.url,
    SVC_TOKEN: platform.ownerToken.secret,
    SVC_CONFIG_DIR: tempDir('svc-config-'),
  });
  /** Deploys the example's source, changed by `edit` (a copy in a folder of its own). */
  const deploy = async (edit: (source: string) => string = (source) => source) => {
    const project = tempDir('svc-asgi-ops-project-');
    const source = edit(exampleSource);
    writeFileSync(path.join(project, 'app.py'), source);
    const manifest = await loadManifest({ target: path.join(project, 'app.py') });
    return platform.deployments.deploy({
      spec: manifest.spec,
      source: { root: manifest.root, entry: manifest.spec.entry },
      workspace: DEFAULT_WORKSPACE,
      stage: 'deployed',
      principal: null,
    });
  };
  const apiOf = async (app: string) => {
    const answer = await call('GET', `/api/v1/apps/${app}/interface`, { token: platform.ownerToken.secret });
    assert.equal(answer.status, 200);
    return answer.json.workloads.find((w: { name: string }) => w.name === 'api').api;
  };

  before(async function () {
    platform = await startPlatform({ config: testConfig(), report: (error) => reports.push(error) });
    call = apiClient(platform.url);
    try {
      await deploy();
    } catch (error) {
      // The CLI imports the app to read it, so FastAPI must be installed where the tests run.
      if (/No module named 'fastapi'/.test((error as Error).message)) this.skip();
      throw error;
    }
  });
  after(async () => platform?.close());
  afterEach(() => assert.deepEqual(reports, [], 'no unexpected errors'));

  it('reads the description at deploy, says so, and the interface carries its operations with the root_path the gateway gives', async () => {
    const view = await call('GET', '/api/v1/apps/asgi-fastapi', { token: platform.ownerToken.secret });
    assert.equal(view.json.deployments[0].api, 'OpenAPI description captured from /openapi.json, 4 operations');
    const api = await apiOf('asgi-fastapi');
    assert.equal(api.source, '/openapi.json');
    assert.deepEqual(
      api.operations.map((o: { name: string; method: string; path: string }) => `${o.name} ${o.method} ${o.path}`),
      ['list_todos GET /todos', 'create_todo POST /todos', 'get_todo GET /todos/{todo_id}', 'delete_todo DELETE /todos/{todo_id}'],
    );
    assert.deepEqual(Object.keys(api.definitions).sort(), ['HTTPValidationError', 'Todo', 'TodoIn', 'ValidationError']);
    // FastAPI lists the root_path it was served under: the deploy read it as the gateway would send it.
    assert.deepEqual(api.openapi.servers, [{ url: '/default/asgi-fastapi/api' }]);
  });

  it("gives a fresh python3 in another folder typed methods that call the deployment; a 404 raises svc.NotFoundError with FastAPI's detail", async () => {
    await appExport(run().context, 'asgi-fastapi', { out });
    const script = `
import dataclasses, inspect, json, svc
from svc_clients.asgi_fastapi import Todo, TodoIn, api

first = api.create_todo(TodoIn(title="write the docs"))
second = api.create_todo(TodoIn(title="ship it", done=True))
seen = {
    "first": [type(first).__name__, first.title, first.done, first.href],
    "got": dataclasses.asdict(api.get_todo(first.id)),
    "done": [t.title for t in api.list_todos(done=True)],
    "open": [t.title for t in api.list_todos(done=False)],
    "all": len(api.list_todos()),
    "deleted": api.delete_todo(second.id),
    "after": [t.id for t in api.list_todos()],
    "signature": str(inspect.signature(api.list_todos)),
    "generic": api.request("GET", "/todos").status_code,
}
try:
    api.get_todo(999)
except svc.NotFoundError as error:
    seen["missing"] = [type(error).__name__, error.code, error.status, error.details, str(error)]
print(json.dumps(seen))
`;
    const seen = printed(await runPython(script, { cwd: elsewhere, env: clientEnv() }));
    assert.deepEqual(seen.first, ['Todo', 'write the docs', false, '/default/asgi-fastapi/api/todos/1']);
    assert.deepEqual(seen.got, { title: 'write the docs', done: false, id: 1, href: '/default/asgi-fastapi/api/todos/1' });
    assert.deepEqual([seen.done, seen.open, seen.all], [['ship it'], ['write the docs'], 2]);
    assert.equal(seen.deleted, null);
    assert.deepEqual(seen.after, [1]);
    assert.equal(seen.signature, '(*, done: bool | None = None) -> list[svc_clients.asgi_fastapi._models.Todo]');
    assert.equal(seen.generic, 200);
    assert.deepEqual(seen.missing.slice(0, 4), ['NotFoundError', 'not_found', 404, 'no todo 999']);
    assert.match(seen.missing[4], /GET .*\/default\/asgi-fastapi\/api\/todos\/999 answered HTTP 404: no todo 999$/);
  });

  it("--check exits 0 while the client matches and 1 after a redeploy changed an operation's signature", async () => {
    await appExport(run().context, 'asgi-fastapi', { out });
    assert.equal(await appExport(run().context, 'asgi-fastapi', { out, check: true }), 0);
    const changed = (source: string) => source.replace('def get_todo(todo_id: int)', 'def get_todo(todo_id: int, verbose: bool = False)');
    assert.notEqual(changed(exampleSource), exampleSource, 'the example still has get_todo(todo_id: int)');
    await deploy(changed);
    try {
      const outdated = run();
      assert.equal(await appExport(outdated.context, 'asgi-fastapi', { out, check: true }), 1);
      assert.match(outdated.stdout(), /svc_clients\/asgi_fastapi\/_workloads\.py differs/);
      const api = await apiOf('asgi-fastapi');
      assert.deepEqual(
        api.operations[2].parameters.map((p: { name: string }) => p.name),
        ['todo_id', 'verbose'],
      );
    } finally {
      await deploy();
    }
  });

  it('an app with openapi=None, or nothing at its openapi path, gets no methods but keeps request(); the deploy says why', async () => {
    const plain = (option: string) => (source: string) =>
      source
        .replace('svc.App("asgi-fastapi")', 'svc.App("asgi-plain")')
        .replace('keep_warm_seconds=120,', `keep_warm_seconds=120,\n    ${option},`);
    const off = await deploy(plain('openapi=None'));
    assert.equal(off.workloads[0]!.api?.message, 'no OpenAPI description: not read (openapi=None)');
    assert.equal(await apiOf('asgi-plain'), null);
    const missing = await deploy(plain('openapi="/nothing.json"'));
    assert.equal(missing.workloads[0]!.api?.message, 'no OpenAPI description: /nothing.json answered HTTP 404');
    assert.equal(await apiOf('asgi-plain'), null);

    await appExport(run().context, 'asgi-plain', { out });
    const script = `
import json
from svc_clients.asgi_plain import api
print(json.dumps({"methods": sorted(n for n in vars(type(api)) if not n.startswith("_")), "status": api.request("GET", "/todos").status_code}))
`;
    assert.deepEqual(printed(await runPython(script, { cwd: elsewhere, env: clientEnv() })), { methods: [], status: 200 });
  });

  it('keeps the description with the deployment: after a restart the interface still carries it', async () => {
    const before = await apiOf('asgi-fastapi');
    const config = platform.config;
    await platform.close();
    platform = await startPlatform({ config, report: (error) => reports.push(error) });
    call = apiClient(platform.url);
    const after = await apiOf('asgi-fastapi');
    assert.deepEqual(after, before);
    const view = await call('GET', '/api/v1/apps/asgi-fastapi', { token: platform.ownerToken.secret });
    assert.match(view.json.deployments[0].api, /^OpenAPI description captured from \/openapi\.json at the deploy of version \d+$/);
  });
});
