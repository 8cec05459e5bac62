import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { type Harness, parseAnswer, PREFIX, rawRequest, startHarness, UNIT, wait } from './harness.js';
import { until } from '../../../helpers/until.js';
import { SvcError } from '../../../../core/model/errors.js';
import { PLUGIN_API_VERSION, type Plugin } from '../../../../core/infra/plugin/types.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Sends a request with node:http (which, unlike fetch, sends any header) and resolves the whole answer. */
function send(
  url: string,
  options: http.RequestOptions = {},
  body?: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, options, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** Polls what the test cannot await directly on every turn of the event loop (no timing assumed, only progress). */
const everyTurn = { intervalMs: 0 };

/**
 * Counts the writes the gateway makes to its clients' sockets: what Node
 * hands the operating system (a socket's `_write` or `_writev`, one per
 * flush of what was written to it, corked or not).
 */
function countWrites(server: http.Server): { readonly count: number } {
  const counted = { count: 0 };
  server.on('connection', (socket: net.Socket) => {
    const writable = socket as net.Socket & { _write: (...args: unknown[]) => void; _writev: (...args: unknown[]) => void };
    for (const method of ['_write', '_writev'] as const) {
      const original = writable[method];
      writable[method] = (...args: unknown[]) => {
        counted.count++;
        original.apply(socket, args);
      };
    }
  });
  return counted;
}

/** A stand-in container that holds every request until the test lets it go. */
function holdingContainer(): { handler: http.RequestListener; held: http.ServerResponse[] } {
  const held: http.ServerResponse[] = [];
  return { held, handler: (_req, res) => void held.push(res) };
}

describe('gateway: X-Request-Id', () => {
  let harness: Harness;
  before(
    async () =>
      (harness = await startHarness({
        container: (req, res) => res.setHeader('content-type', 'application/json').end(JSON.stringify({ id: req.headers['x-request-id'] })),
      })),
  );
  after(async () => harness.close());

  it('passes a well-formed id through to the container and back', async () => {
    const answer = await send(`${harness.url}${PREFIX}/`, { headers: { 'X-Request-Id': 'trace-1.2:3_x' } });
    assert.equal(answer.headers['x-request-id'], 'trace-1.2:3_x');
    assert.deepEqual(JSON.parse(answer.body), { id: 'trace-1.2:3_x' });
  });

  const malformed: [string, string[]][] = [
    ['with spaces', ['bad id']],
    ['with other characters', ['id;drop', 'id/1', 'ïd']],
    ['longer than 128 characters', ['x'.repeat(129)]],
    ['empty', ['']],
  ];
  for (const [what, ids] of malformed) {
    it(`replaces an id ${what} with a fresh one, also for the container`, async () => {
      for (const id of ids) {
        const answer = parseAnswer(
          await rawRequest(harness.port, `GET ${PREFIX}/ HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: ${id}\r\nConnection: close\r\n\r\n`),
        );
        const sent = /^x-request-id: (.*)$/im.exec(answer.headers)?.[1];
        assert.match(sent ?? '', UUID, id);
        assert.deepEqual(JSON.parse(answer.body), { id: sent });
      }
    });
  }

  it('keeps an id of exactly 128 characters', async () => {
    const id = 'a'.repeat(128);
    const answer = await send(`${harness.url}${PREFIX}/`, { headers: { 'X-Request-Id': id } });
    assert.equal(answer.headers['x-request-id'], id);
  });

  it('replaces several ids with one fresh one', async () => {
    const answer = parseAnswer(
      await rawRequest(
        harness.port,
        `GET ${PREFIX}/ HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: a\r\nX-Request-Id: b\r\nConnection: close\r\n\r\n`,
      ),
    );
    assert.match(/^x-request-id: (.*)$/im.exec(answer.headers)?.[1] ?? '', UUID);
  });

  it("replaces the container's own X-Request-Id with the gateway's", async () => {
    const own = await startHarness({ container: (_req, res) => res.setHeader('x-request-id', 'from-the-container').end('ok') });
    try {
      const answer = await send(`${own.url}${PREFIX}/`, { headers: { 'X-Request-Id': 'mine' } });
      assert.equal(answer.headers['x-request-id'], 'mine');
    } finally {
      await own.close();
    }
  });
});

describe('gateway: every error answer carries the request id', () => {
  let harness: Harness | undefined;
  afterEach(async () => harness?.close());

  async function errorOf(
    url: string,
    options: http.RequestOptions = {},
  ): Promise<{ status: number; code: string; headers: http.IncomingHttpHeaders }> {
    const answer = await send(url, { ...options, headers: { ...options.headers, 'X-Request-Id': 'err-1' } });
    assert.equal(answer.headers['x-request-id'], 'err-1', `${answer.status} ${answer.body}`);
    assert.match(String(answer.headers['content-type']), /^application\/json/);
    return { status: answer.status, code: (JSON.parse(answer.body) as { error: { code: string } }).error.code, headers: answer.headers };
  }

  it('404 and 405 of a workload, 401 of an unknown URL, 413, 400', async () => {
    harness = await startHarness({ maxBodyBytes: 10 });
    assert.deepEqual((await errorOf(`${harness.url}${PREFIX}/elsewhere`)).code, 'not_found');
    const wrongMethod = await errorOf(`${harness.url}${PREFIX}/`, { method: 'PUT' });
    assert.deepEqual([wrongMethod.status, wrongMethod.code, wrongMethod.headers.allow], [405, 'method_not_allowed', 'GET, POST']);
    assert.deepEqual((await errorOf(`${harness.url}/default/nothing/here`)).code, 'unauthorized', 'unknown URLs need a token first');
    const tooLarge = await errorOf(`${harness.url}${PREFIX}/`, { method: 'POST', headers: { 'Content-Length': '11' } });
    assert.equal(tooLarge.status, 413);
    const badHost = parseAnswer(
      await rawRequest(harness.port, `GET ${PREFIX}/ HTTP/1.1\r\nHost: a b\r\nX-Request-Id: err-2\r\nConnection: close\r\n\r\n`),
    );
    assert.equal(badHost.status, 400);
    assert.match(badHost.headers, /^x-request-id: err-2$/im);
  });

  it('401 with WWW-Authenticate on a protected workload', async () => {
    harness = await startHarness({ authorized: true });
    const refused = await errorOf(`${harness.url}${PREFIX}/`);
    assert.deepEqual([refused.status, refused.code, refused.headers['www-authenticate']], [401, 'unauthorized', 'Bearer']);
    assert.equal(harness.seen.length, 0);
  });

  it('serves through a synchronous and an asynchronous authenticate hook alike, and answers a refusal thrown by either', async () => {
    const principal = { workspace: 'default', subject: 'alice' };
    const refusal = () => new SvcError('forbidden', 'not today');
    const urls: string[] = [];
    const who: Plugin = {
      name: 'test:who',
      apiVersion: PLUGIN_API_VERSION,
      hooks: {
        authenticate: (request) => {
          switch (request.headers['x-who']) {
            case 'sync':
              return (urls.push(request.url.href), principal);
            case 'async':
              return Promise.resolve(principal) as never;
            case 'deny-sync':
              throw refusal();
            case 'deny-async':
              return Promise.reject(refusal()) as never;
            default:
              return null;
          }
        },
      },
    };
    harness = await startHarness({ authorized: true, plugins: [who] });
    for (const mode of ['sync', 'async']) {
      const answer = await fetch(`${harness.url}${PREFIX}/`, { headers: { 'x-who': mode, authorization: 'Bearer secret' } });
      assert.equal(answer.status, 200, mode);
      assert.deepEqual(await answer.json(), { ok: true });
    }
    assert.equal(harness.seen.length, 2);
    assert.deepEqual(urls, [`${harness.url}${PREFIX}/`], 'a hook that reads the URL gets it');
    assert.ok(
      harness.seen.every((req) => req.headers.authorization === undefined),
      'the credentials stay with the gateway',
    );
    for (const mode of ['deny-sync', 'deny-async']) {
      const refused = await errorOf(`${harness.url}${PREFIX}/`, { headers: { 'x-who': mode } });
      assert.deepEqual([refused.status, refused.code], [403, 'forbidden'], mode);
    }
    assert.equal((await errorOf(`${harness.url}${PREFIX}/`, { headers: { 'x-who': 'nobody' } })).code, 'unauthorized');
    assert.equal(harness.seen.length, 2, 'no refused request reached the container');
    assert.deepEqual(harness.reports, []);
  });

  it('429 with Retry-After when the queue is full', async () => {
    const container = holdingContainer();
    harness = await startHarness({ container: container.handler, maxPendingTasks: 0 });
    const first = send(`${harness.url}${PREFIX}/`);
    await until('the first request in the container', () => container.held.length === 1, everyTurn);
    const refused = await errorOf(`${harness.url}${PREFIX}/`);
    assert.deepEqual([refused.status, refused.code, refused.headers['retry-after']], [429, 'queue_full', '1']);
    container.held[0]!.end('done');
    assert.equal((await first).body, 'done');
  });

  it('502 when the container drops the connection', async () => {
    harness = await startHarness({ container: (req) => req.socket.destroy() });
    const failed = await errorOf(`${harness.url}${PREFIX}/`);
    assert.deepEqual([failed.status, failed.code], [502, 'worker_crashed']);
  });
});

describe('gateway: passing answers on', () => {
  let harness: Harness | undefined;
  afterEach(async () => harness?.close());

  it('sends each piece of a chunked answer on as it comes, before the container has finished', async () => {
    let finish: () => void = () => {};
    const finished = new Promise<void>((resolve) => (finish = resolve));
    harness = await startHarness({
      container: (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: 1\n\n');
        void finished.then(() => res.end('data: 2\n\n'));
      },
    });
    const response = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http.get(`${harness!.url}${PREFIX}/`, resolve).on('error', reject),
    );
    assert.equal(response.headers['content-type'], 'text/event-stream');
    assert.equal(response.headers['transfer-encoding'], 'chunked');
    const first = await new Promise<string>((resolve) => response.once('data', (chunk: Buffer) => resolve(chunk.toString())));
    assert.equal(first, 'data: 1\n\n');
    finish();
    const rest = await new Promise<string>((resolve) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => resolve(text));
    });
    assert.equal(rest, 'data: 2\n\n');
  });

  it('sends a short answer in one write with its head, with or without a Content-Length, though the container wrote them apart', async () => {
    harness = await startHarness({
      container: (req, res) => {
        res.writeHead(200, req.url!.endsWith('?chunked') ? { 'content-type': 'text/plain' } : { 'content-length': 5 });
        res.flushHeaders();
        res.end('hello');
      },
    });
    const writes = countWrites(harness.server);
    for (const target of ['/', '/?chunked']) {
      const before = writes.count;
      const answer = await send(`${harness.url}${PREFIX}${target}`);
      assert.equal(answer.body, 'hello');
      assert.equal(answer.headers['transfer-encoding'], target === '/' ? undefined : 'chunked');
      assert.equal(writes.count - before, 1, target);
    }
  });

  it('sends the head of a stream that is slow to start before its first piece', async () => {
    const { handler, held } = holdingContainer();
    harness = await startHarness({
      container: (req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.flushHeaders();
        handler(req, res);
      },
    });
    const response = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http.get(`${harness!.url}${PREFIX}/`, resolve).on('error', reject),
    );
    assert.equal(response.headers['content-type'], 'text/event-stream');
    assert.equal(held.length, 1, 'the container has not written a piece yet');
    held[0]!.end('data: 1\n\n');
    const text = await new Promise<string>((resolve) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve(body));
    });
    assert.equal(text, 'data: 1\n\n');
  });

  it('streams a large answer of known length, keeping its length', async () => {
    const body = 'y'.repeat(300_000);
    harness = await startHarness({
      methods: ['GET', 'HEAD'],
      container: (req, res) => res.writeHead(200, { 'content-length': body.length }).end(req.method === 'HEAD' ? undefined : body),
    });
    const get = await send(`${harness.url}${PREFIX}/`);
    assert.equal(get.headers['content-length'], String(body.length));
    assert.equal(get.body, body);
    const head = await send(`${harness.url}${PREFIX}/`, { method: 'HEAD' });
    assert.equal(head.headers['content-length'], String(body.length));
    assert.equal(head.body, '');
  });

  it('drops hop-by-hop headers of the answer and the ones its Connection header names', async () => {
    harness = await startHarness({
      container: (_req, res) => {
        res.writeHead(200, [
          'Connection',
          'keep-alive, X-Hop',
          'X-Hop',
          'secret',
          'Keep-Alive',
          'timeout=99',
          'Proxy-Authenticate',
          'Basic',
          'X-End',
          'kept',
          'Set-Cookie',
          'a=1',
          'Set-Cookie',
          'b=2',
        ]);
        res.end('ok');
      },
    });
    const answer = await send(`${harness.url}${PREFIX}/`);
    assert.equal(answer.headers['x-hop'], undefined);
    assert.equal(answer.headers['proxy-authenticate'], undefined);
    assert.notEqual(answer.headers['keep-alive'], 'timeout=99', 'the gateway speaks for its own connection');
    assert.equal(answer.headers['x-end'], 'kept');
    assert.deepEqual(answer.headers['set-cookie'], ['a=1', 'b=2']);
  });

  it('tells the container who called: Host, X-Forwarded-*, the declared body length', async () => {
    harness = await startHarness({ container: (req, res) => res.end(JSON.stringify(req.headers)) });
    const answer = await send(
      `${harness.url}${PREFIX}/?q=1`,
      { method: 'POST', headers: { 'Content-Length': '4', 'X-Forwarded-For': '6.6.6.6', 'X-Forwarded-Host': 'evil' } },
      'body',
    );
    const seen = JSON.parse(answer.body) as Record<string, string>;
    assert.equal(seen.host, `127.0.0.1:${harness.port}`);
    assert.equal(seen['x-forwarded-for'], '127.0.0.1');
    assert.equal(seen['x-forwarded-host'], `127.0.0.1:${harness.port}`);
    assert.equal(seen['x-forwarded-proto'], 'http');
    assert.equal(seen['x-forwarded-prefix'], PREFIX);
    assert.equal(seen['content-length'], '4');
    assert.equal(harness.seen[0]!.url, '/?q=1');
  });
});

describe('gateway: a client leaving while queued', () => {
  let harness: Harness;
  const container = holdingContainer();
  before(async () => (harness = await startHarness({ container: container.handler, maxPendingTasks: 1 })));
  after(async () => harness.close());

  it('gives its place in the queue back, and its request never reaches the container', async () => {
    // Capacity 1, one place in the queue: A takes the slot, B the place.
    const a = send(`${harness.url}${PREFIX}/`);
    await until('A in the container', () => container.held.length === 1, everyTurn);
    const b = http.get(`${harness.url}${PREFIX}/`);
    b.on('error', () => {});
    await until('B queued', () => harness.admission.load(UNIT).queued === 1, everyTurn);
    b.destroy();
    await until("B's place given back", () => harness.admission.load(UNIT).queued === 0, everyTurn);
    // C gets the freed place (it would get 429 if B still held it), and the slot once A is done.
    const c = send(`${harness.url}${PREFIX}/`);
    await until('C queued', () => harness.admission.load(UNIT).queued === 1, everyTurn);
    container.held[0]!.end('a');
    assert.equal((await a).body, 'a');
    await until('C in the container', () => container.held.length === 2, everyTurn);
    container.held[1]!.end('c');
    assert.equal((await c).status, 200);
    assert.equal(harness.seen.length, 2, 'B never reached the container');
    assert.deepEqual(harness.reports, []);
  });
});

describe('gateway: pipelined requests on one connection', () => {
  let harness: Harness;
  const container = holdingContainer();
  before(async () => {
    harness = await startHarness({ container: container.handler });
    // Two slots: both requests of the connection are in flight at once.
    const [instance] = harness.registry.instances(UNIT);
    await harness.registry.register({ ...instance!, id: 'c-2' });
  });
  after(async () => harness.close());

  it('gives back the slot of a response still waiting for its turn when the client leaves', async () => {
    const client = net.connect(harness.port, '127.0.0.1');
    client.on('error', () => {});
    await new Promise((resolve) => client.once('connect', resolve));
    client.write(`GET ${PREFIX}/?first HTTP/1.1\r\nHost: localhost\r\n\r\nGET ${PREFIX}/?second HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    await until('both requests in the container', () => container.held.length === 2, everyTurn);
    // The second answer is complete, but it must wait for the first one: it has no socket yet.
    const second = container.held.find((res) => res.req.url === '/?second')!;
    second.end('second');
    await new Promise((resolve) => second.once('finish', resolve));
    await wait(50);
    assert.equal(harness.admission.load(UNIT).inFlight, 2);
    client.destroy();
    const deadline = Date.now() + 2000;
    while (harness.admission.load(UNIT).inFlight > 0 && Date.now() < deadline) await wait(10);
    assert.equal(harness.admission.load(UNIT).inFlight, 0, 'both slots are free again');
    for (const res of container.held) res.end();
    assert.deepEqual(harness.reports, []);
  });
});
