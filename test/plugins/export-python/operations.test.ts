/**
 * An ASGI app's operations as typed methods of its object: the signatures
 * and docstrings the exporter writes from the interface's `api`, and how the
 * calls travel and come back against a stand-in server (path, query, header
 * and body parameters, decoded results, 204, FastAPI's `{"detail": ...}`
 * errors as svc's exceptions). That mypy --strict and pyright accept the
 * client: test/e2e/app-export-types.test.ts, in one run with the other clients.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pythonExporter } from '../../../plugins/export-python/index.js';
import { tempDir } from '../../helpers/config.js';
import { OPERATIONS_APP } from './operations-app.js';
import { printed, pythonPath, runPython, writeFiles } from './python-helpers.js';

describe('svc:export-python: ASGI operations', function () {
  this.timeout(120_000);
  const out = writeFiles(tempDir('svc-export-ops-'), pythonExporter.export(OPERATIONS_APP, {}));
  let server: http.Server;
  let base: string;
  const seen: { method: string; url: string; token: string | undefined; type: string | undefined; body: string }[] = [];

  before(async () => {
    server = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        seen.push({
          method: request.method!,
          url: request.url!,
          token: request.headers['x-token'] as string | undefined,
          type: request.headers['content-type'],
          body,
        });
        const send = (status: number, answer?: unknown) => {
          response.writeHead(status, answer === undefined ? {} : { 'Content-Type': 'application/json' });
          response.end(answer === undefined ? undefined : JSON.stringify(answer));
        };
        const todo = { id: 7, title: 'docs', done: true, href: '/default/todos/api/todos/7', extra: 1 };
        const route = `${request.method} ${new URL(request.url!, 'http://x').pathname}`;
        if (route === 'GET /default/todos/api/todos') send(200, [todo]);
        else if (route === 'POST /default/todos/api/todos' && JSON.parse(body).title === '')
          send(422, { detail: [{ loc: ['body', 'title'], msg: 'Field required', type: 'missing' }] });
        else if (route === 'POST /default/todos/api/todos') send(201, todo);
        else if (route === 'GET /default/todos/api/todos/7') send(200, todo);
        else if (route === 'DELETE /default/todos/api/todos/7') send(204);
        else if (route === 'POST /default/todos/odd/connect/a%2Fb') send(200, null);
        else send(404, { detail: 'no todo 8' });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => void seen.splice(0));

  const run = async (script: string) =>
    printed(
      await runPython(`import inspect, json, svc\nfrom svc_clients.todos import api, odd, plain\n${script}`, {
        cwd: tempDir(),
        env: { PYTHONPATH: pythonPath(out), SVC_SERVER: base, SVC_TOKEN: 'svc_test' },
      }),
    );

  it("gives each operation a method with the route's own types: path positional, body next, query and headers keyword-only", async () => {
    const seen = await run(`
sig = lambda f: str(inspect.signature(f)).replace("svc_clients.todos._models.", "").replace("svc_clients.todos._runtime.", "_rt.")
print(json.dumps({
    "list": sig(api.list_todos), "create": sig(api.create_todo), "get": sig(api.get_todo), "delete": sig(api.delete_todo),
    "doc": inspect.getdoc(api.create_todo),
    "odd": sorted(name for name in vars(type(odd)) if not name.startswith("_")),
    "connect": sig(odd.connect_2), "import": sig(odd.import_), "request": sig(odd.request_2),
    "plain": sorted(name for name in vars(type(plain)) if not name.startswith("_")),
    "generic": [callable(odd.request), callable(odd.connect), callable(plain.request)],
}))
`);
    assert.equal(seen.list, '(*, done: bool | None = None) -> list[Todo]');
    assert.equal(seen.create, '(body: TodoIn) -> Todo');
    assert.equal(seen.get, '(todo_id: int) -> Todo');
    assert.equal(seen.delete, '(todo_id: int) -> None');
    assert.equal(
      seen.doc,
      'Create Todo\n\nAdds a todo: {"title": "...", "done": false}.\n\nCalls POST /todos of todos/api and returns the answer as Todo.\nAn error answer raises svc\'s typed exception (svc.NotFoundError, svc.InvalidRequestError, ...).',
    );
    // request and connect stay the SDK's: the operations named so get another name.
    assert.deepEqual(seen.odd, ['connect_2', 'import_', 'request_2']);
    assert.match(
      seen.connect,
      /^\(class_: str, body: (Optional\[Mapping\[str, str\]\]|(typing\.)?Mapping\[str, str\] \| None) = None, \*, x_token: str\) -> int \| None$/,
    );
    // No 2xx answer described: any JSON.
    assert.equal(seen.import, '(*, self_2: int | None = None) -> Any');
    assert.equal(seen.request, '() -> svc._client._response.Response');
    assert.deepEqual(seen.plain, []);
    assert.deepEqual(seen.generic, [true, true, true]);
  });

  it('sends path, query, header and body parameters where the description puts them, and decodes the answers', async () => {
    const result = await run(`
from svc_clients.todos import TodoIn
created = api.create_todo(TodoIn(title="docs"))
listed = api.list_todos(done=True)
everything = api.list_todos()
got = api.get_todo(7)
gone = api.delete_todo(7)
number = odd.connect_2("a/b", {"k": "v"}, x_token="t1")
print(json.dumps({"created": [type(created).__name__, created.id, created.done], "listed": [t.title for t in listed], "got": got.href, "gone": gone, "number": number, "all": len(everything)}))
`);
    assert.deepEqual(result, {
      created: ['Todo', 7, true],
      listed: ['docs'],
      got: '/default/todos/api/todos/7',
      gone: null,
      number: null,
      all: 1,
    });
    assert.deepEqual(
      seen.map((s) => `${s.method} ${s.url}`),
      [
        'POST /default/todos/api/todos',
        'GET /default/todos/api/todos?done=true',
        'GET /default/todos/api/todos',
        'GET /default/todos/api/todos/7',
        'DELETE /default/todos/api/todos/7',
        'POST /default/todos/odd/connect/a%2Fb',
      ],
    );
    assert.deepEqual(JSON.parse(seen[0]!.body), { title: 'docs', done: false });
    assert.equal(seen[0]!.type, 'application/json');
    assert.equal(seen[5]!.token, 't1');
    assert.equal(seen[5]!.body, 'k=v');
    assert.equal(seen[5]!.type, 'application/x-www-form-urlencoded');
  });

  it("raises svc's typed exceptions with FastAPI's detail: NotFoundError for a 404, InvalidRequestError with the fields for a 422", async () => {
    const result = await run(`
from svc_clients.todos import TodoIn
out = {}
try:
    api.get_todo(8)
except svc.NotFoundError as error:
    out["404"] = [error.code, error.status, str(error), error.details]
try:
    api.create_todo(TodoIn(title=""))
except svc.InvalidRequestError as error:
    out["422"] = [error.status, str(error)]
print(json.dumps(out))
`);
    assert.deepEqual(result['404'].slice(0, 2), ['not_found', 404]);
    assert.match(result['404'][2], /GET http:\/\/127\.0\.0\.1:\d+\/default\/todos\/api\/todos\/8 answered HTTP 404: no todo 8/);
    assert.equal(result['404'][3], 'no todo 8');
    assert.equal(result['422'][0], 422);
    assert.match(result['422'][1], /answered HTTP 422: body\.title: Field required/);
  });
});
