/**
 * The generated client's calls, against a stand-in server that records what
 * it receives: how arguments travel (JSON bodies, query strings with repeated
 * keys, JSON keys that are not identifiers, base64 bytes, **kwargs), and how
 * answers come back (nested dataclasses, streams, raw bytes, typed errors).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { AppInterface } from '../../../core/infra/plugin/types.js';
import { packageRoot } from '../../../core/model/paths.js';
import { pythonExporter } from '../../../plugins/export-python/index.js';
import { tempDir } from '../../helpers/config.js';
import { printed, pythonPath, runPython, writeFiles } from './python-helpers.js';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly authorization: string | undefined;
  readonly body: string;
}

const answers: Record<string, (response: http.ServerResponse) => void> = {
  '/default/kitchen-sink/shapes/shapes': (response) =>
    json(response, 200, { points: [{ x: 1, y: 2.5 }], color: 'green', parent: { points: [], color: 'red', parent: null }, added: 'later' }),
  '/default/kitchen-sink/count/count': (response) => {
    response.writeHead(200, { 'Content-Type': 'text/event-stream' });
    response.end(
      'data: {"x":0,"y":0}\n\n: ping\n\ndata: {"x":1,"y":1}\n\nevent: error\ndata: {"error": {"code": "handler_error", "message": "RuntimeError in count; see the workload logs"}}\n\n',
    );
  },
  '/default/kitchen-sink/raw/raw': (response) => {
    response.writeHead(200, { 'Content-Type': 'application/octet-stream' });
    response.end(Buffer.from([0, 1, 2, 255]));
  },
  '/default/kitchen-sink/people/people': (response) =>
    json(response, 200, [
      { name: 'A', age: null, addresses: [{ street: 'Main', 'zip-code': '1000' }], best_friend: { name: 'B', addresses: [] } },
    ]),
  '/default/kitchen-sink/odd/odd': (response) => json(response, 200, { p: { x: 1 } }),
  '/default/kitchen-sink/class/odd': (response) =>
    json(response, 503, { error: { code: 'app_paused', message: 'kitchen-sink is paused', hint: 'svc app resume kitchen-sink' } }),
};

function json(response: http.ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'Content-Type': 'application/json' });
  response.end(JSON.stringify(body));
}

describe('a generated client against a stand-in server', function () {
  this.timeout(60_000);
  let server: http.Server;
  let base: string;
  const seen: Seen[] = [];
  const out = tempDir('svc-export-client-');

  before(async () => {
    const app: AppInterface = JSON.parse(
      readFileSync(path.join(packageRoot, 'test', 'fixtures', 'export', 'kitchen-sink.interface.json'), 'utf8'),
    );
    writeFiles(out, pythonExporter.export(app, {}));
    server = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        seen.push({ method: request.method!, url: request.url!, authorization: request.headers.authorization, body });
        const answer = answers[new URL(request.url!, 'http://x').pathname];
        if (answer) answer(response);
        else json(response, 404, { error: { code: 'not_found', message: `no route ${request.url}` } });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => void seen.splice(0));

  const call = async (script: string) =>
    printed(
      await runPython(`import dataclasses, json, svc\n${script}`, {
        cwd: tempDir(),
        env: { PYTHONPATH: pythonPath(out), SVC_SERVER: base, SVC_TOKEN: 'svc_test' },
      }),
    );

  it('sends a GET as query parameters (lists as the key repeated) and decodes nested and recursive dataclasses, ignoring fields it does not know', async () => {
    const result = await call(`
from svc_clients.kitchen_sink import Shape, Point, shapes
shape = shapes.request(ids=[1, 2], color="red")
print(json.dumps({"type": type(shape).__name__, "point": isinstance(shape.points[0], Point), "parent": type(shape.parent).__name__,
                  "shape": dataclasses.asdict(shape)}))`);
    assert.deepEqual(result, {
      type: 'Shape',
      point: true,
      parent: 'Shape',
      shape: { points: [{ x: 1, y: 2.5 }], tags: null, color: 'green', parent: { points: [], tags: null, color: 'red', parent: null } },
    });
    assert.deepEqual(
      seen.map((s) => [s.method, s.url, s.authorization]),
      [['GET', '/default/kitchen-sink/shapes/shapes?ids=1&ids=2&name=x&color=red', 'Bearer svc_test']],
    );
  });

  it('sends a POST as a JSON body with the JSON keys of the dataclasses, and decodes a list of pydantic-shaped models', async () => {
    const result = await call(`
from svc_clients.kitchen_sink import Address, Person, people
friends = people.request(Person(name="A", addresses=[Address(street="Main", zip_code="1000")]), strict=True)
print(json.dumps({"types": [type(f).__name__ for f in friends], "zip": friends[0].addresses[0].zip_code, "friend": type(friends[0].best_friend).__name__}))`);
    assert.deepEqual(result, { types: ['Person'], zip: '1000', friend: 'Person' });
    assert.deepEqual(JSON.parse(seen[0]!.body), {
      person: { name: 'A', age: null, addresses: [{ street: 'Main', 'zip-code': '1000' }], best_friend: null },
      limit: 10,
      strict: true,
    });
  });

  it('sends bytes as base64, leaves unset optional fields out, passes **kwargs, and returns raw bytes', async () => {
    const result = await call(`
from svc_clients.kitchen_sink import Options, raw
print(json.dumps(list(raw.request(b"hi", Options(verbose=True), extra=5))))`);
    assert.deepEqual(result, [0, 1, 2, 255]);
    assert.deepEqual(JSON.parse(seen[0]!.body), { data: 'aGk=', options: { verbose: true }, extra: 5 });
  });

  it('yields a stream item by item and raises the typed exception of its error event', async () => {
    const result = await call(`
from svc_clients.kitchen_sink import count
items = []
try:
    for point in count.request(to=2):
        items.append(dataclasses.asdict(point))
except svc.RemoteCallError as error:
    failure = [type(error).__name__, error.code, str(error)]
print(json.dumps({"items": items, "failure": failure}))`);
    assert.deepEqual(result, {
      items: [
        { x: 0, y: 0 },
        { x: 1, y: 1 },
      ],
      failure: ['RemoteCallError', 'handler_error', 'RuntimeError in count; see the workload logs'],
    });
    assert.equal(seen[0]!.url, '/default/kitchen-sink/count/count?to=2');
  });

  it('raises the typed exception of an error answer, and unexpected_response for an answer that does not fit', async () => {
    const result = await call(`
from svc_clients.kitchen_sink import class_, odd
try:
    class_.request(first_name="x")
except svc.UnavailableError as error:
    paused = [type(error).__name__, error.code, error.status, error.hint]
try:
    odd.request()
except svc.RemoteError as error:
    changed = [error.code, error.message, error.hint]
print(json.dumps({"paused": paused, "changed": changed, "raw": class_.raw(first_name="x").status_code}))`);
    assert.deepEqual(result.paused, ['UnavailableError', 'app_paused', 503, 'svc app resume kitchen-sink']);
    assert.deepEqual(result.changed, [
      'unexpected_response',
      "the answer of kitchen-sink/odd does not fit the generated client: the answer.p lacks the field 'y' of Point",
      'The deployed app changed since this client was generated: run svc app export kitchen-sink again.',
    ]);
    assert.equal(result.raw, 503);
    assert.deepEqual(JSON.parse(seen[0]!.body), { lambda_: 'l', self: 1, kwargs: [1, 'a'], 'first name': 'x', '"); import os; ("': 2 });
  });

  it('refuses to call a function, pointing at .remote()', async () => {
    const result = await call(`
from svc_clients.kitchen_sink import compute
try:
    compute.request([1.0])
except TypeError as error:
    print(json.dumps(str(error)))`);
    assert.match(
      result,
      /^compute is a function of kitchen-sink: it has no URL, so a generated client cannot call it\. Call compute\.remote\(\.\.\.\)/,
    );
    assert.deepEqual(seen, []);
  });
});
