/**
 * A follower's forwarding to the leader, over real sockets: the request as it
 * is (method, path, query, end-to-end headers, a streamed body), the answer
 * streamed back, and 503 `not_leader` whenever forwarding is impossible.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { createLeaderForward, FORWARDED_BY_HEADER, type LeaderForward } from '../../../../core/traffic/cluster/leader-forward.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function listen(handler: http.RequestListener): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer(handler);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })),
  );
}

describe('createLeaderForward()', () => {
  const servers: http.Server[] = [];
  let forward: LeaderForward | undefined;
  afterEach(async () => {
    forward?.close();
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  async function follower(leaderAddress: () => string | null, self = 'http://follower.invalid:1'): Promise<string> {
    forward = createLeaderForward({ leaderAddress, self: () => self });
    const { server, url } = await listen((req, res) => forward!.handle(req, res));
    servers.push(server);
    return url;
  }

  it('sends the request as it is and streams the answer back', async () => {
    const seen: Seen[] = [];
    const leader = await listen((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
        res.writeHead(201, { 'Content-Type': 'application/json', 'Set-Cookie': ['a=1', 'b=2'], 'X-Answer': 'yes' });
        res.end(JSON.stringify({ ok: true }));
      });
    });
    servers.push(leader.server);
    const url = await follower(() => leader.url);
    const answer = await fetch(`${url}/api/v1/apps/x/deployments?dry=1`, {
      method: 'POST',
      body: 'x'.repeat(100_000),
      headers: { Authorization: 'Bearer secret', 'Content-Type': 'text/plain', Host: 'svc.example.com' },
    });
    assert.equal(answer.status, 201);
    assert.deepEqual(await answer.json(), { ok: true });
    assert.equal(answer.headers.get('x-answer'), 'yes');
    assert.deepEqual(answer.headers.getSetCookie(), ['a=1', 'b=2']);
    assert.equal(seen.length, 1);
    const [request] = seen;
    assert.equal(request!.method, 'POST');
    assert.equal(request!.url, '/api/v1/apps/x/deployments?dry=1');
    assert.equal(request!.body.length, 100_000);
    assert.equal(request!.headers.authorization, 'Bearer secret', 'the token goes to the leader, which checks it');
    assert.equal(request!.headers[FORWARDED_BY_HEADER], 'http://follower.invalid:1');
  });

  it('streams a long answer as it comes (a followed log stream)', async () => {
    let finish: (() => void) | undefined;
    const leader = await listen((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.write('first\n');
      finish = () => res.end('last\n');
    });
    servers.push(leader.server);
    const url = await follower(() => leader.url);
    const answer = await fetch(`${url}/api/v1/logs`);
    const reader = answer.body!.getReader();
    const first = await reader.read();
    assert.equal(Buffer.from(first.value!).toString(), 'first\n', 'the first line arrives before the answer ends');
    finish!();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += Buffer.from(chunk.value).toString();
    assert.equal(rest, 'last\n');
  });

  it('answers 503 not_leader when no replica leads, when the lock names itself or no URL, when the leader is down, and for a request already forwarded', async () => {
    const closed = await listen(() => {});
    await new Promise((resolve) => closed.server.close(resolve));
    const cases: [() => string | null, Record<string, string>, RegExp][] = [
      [() => null, {}, /no replica leads/],
      [() => 'http://follower.invalid:1', {}, /names this replica/],
      [() => 'http://', {}, /which is not a URL/],
      [() => closed.url, {}, /did not answer \(ECONNREFUSED\)/],
      [() => closed.url, { [FORWARDED_BY_HEADER]: 'http://other' }, /forwarded here by another replica/],
    ];
    for (const [leaderAddress, headers, why] of cases) {
      const url = await follower(leaderAddress);
      const answer = await fetch(`${url}/api/v1/whoami`, { headers });
      assert.equal(answer.status, 503);
      assert.equal(answer.headers.get('retry-after'), '1');
      const body = (await answer.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'not_leader');
      assert.match(body.error.message, why);
      forward!.close();
    }
  });

  it('sends only a path, to the leader: a request target naming another host gets 400 and goes nowhere', async () => {
    const hits: string[] = [];
    const leader = await listen((req, res) => {
      hits.push(`leader ${req.url}`);
      res.end('leader');
    });
    const internal = await listen((req, res) => {
      hits.push(`internal ${req.url}`);
      res.end('SECRET');
    });
    servers.push(leader.server, internal.server);
    const url = await follower(() => leader.url);
    const port = Number(new URL(url).port);
    const internalHost = new URL(internal.url).host;
    for (const target of [`//${internalHost}/v1/kv/?recurse`, `${internal.url}/v1/kv/?recurse`]) {
      const answer = await rawRequest(port, target);
      assert.match(answer, /^HTTP\/1\.1 400 /, answer);
      assert.match(answer, /"code":"bad_request"/);
      assert.doesNotMatch(answer, /SECRET/);
    }
    assert.match(await rawRequest(port, '/api/v1/whoami?x=1'), /^HTTP\/1\.1 200 [\s\S]*leader$/);
    assert.deepEqual(hits, ['leader /api/v1/whoami?x=1']);
  });

  it("stops the leader's work when the client goes away", async () => {
    let leaderSawClose: (() => void) | undefined;
    const gone = new Promise<void>((resolve) => (leaderSawClose = resolve));
    const leader = await listen((req, res) => {
      res.writeHead(200);
      res.write('streaming');
      req.socket.on('close', () => leaderSawClose!());
    });
    servers.push(leader.server);
    const url = await follower(() => leader.url);
    const controller = new AbortController();
    const answer = await fetch(`${url}/api/v1/logs?follow`, { signal: controller.signal });
    await answer.body!.getReader().read();
    controller.abort();
    await gone;
  });
});

/** One HTTP/1.1 request with this request target, as a client could send it; the raw answer. */
function rawRequest(port: number, target: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () =>
      socket.write(`GET ${target} HTTP/1.1\r\nHost: svc.example\r\nAuthorization: Bearer user-token\r\nConnection: close\r\n\r\n`),
    );
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}
