/**
 * The CLI's API client rides through a change of leader among svc replicas:
 * an answer 503 `not_leader` (nothing was done) is sent again after its
 * Retry-After, within a bound; other 503s are answered at once.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiClient } from '../../cli/api-client.js';
import { SvcError } from '../../core/model/errors.js';

const notLeader = JSON.stringify({ error: { code: 'not_leader', message: 'this svc replica is a standby.', hint: 'retry' } });

describe('ApiClient during a change of leader', () => {
  let server: http.Server;
  let url: string;
  let seen: { method: string; body: string }[];
  let answers: ((res: http.ServerResponse) => void)[];

  beforeEach(async () => {
    seen = [];
    answers = [];
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        seen.push({ method: req.method!, body });
        (answers.shift() ?? ((r) => r.writeHead(500).end()))(res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(() => new Promise((resolve) => server.close(resolve)));

  const standby = (res: http.ServerResponse) =>
    res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' }).end(notLeader);
  const ok = (res: http.ServerResponse) => res.writeHead(201, { 'Content-Type': 'application/json' }).end('{"ok":true}');

  it('sends a request answered not_leader again, body and all, until a leader answers', async () => {
    answers.push(standby, standby, ok);
    const client = new ApiClient({ server: url, token: 't' });
    assert.deepEqual(await client.post('/api/v1/apps/a/deployments', { bundle: 'x' }), { ok: true });
    assert.equal(seen.length, 3);
    assert.ok(seen.every((request) => request.method === 'POST' && request.body === '{"bundle":"x"}'));
  });

  it('gives up after its bound with the not_leader error, and never retries another 503', async () => {
    answers.push(standby, standby, standby);
    const client = new ApiClient({ server: url, token: 't', leaderWaitMs: 1_500 });
    await assert.rejects(
      client.get('/api/v1/whoami'),
      (error: unknown) => error instanceof SvcError && error.code === 'not_leader' && /standby/.test(error.message),
    );
    assert.equal(seen.length, 2, 'sent again once within 1.5 s (Retry-After: 1)');

    seen.length = 0;
    answers.length = 0;
    answers.push((res) =>
      res
        .writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' })
        .end(JSON.stringify({ error: { code: 'starting', message: 'still starting.' } })),
    );
    await assert.rejects(client.get('/api/v1/whoami'), (error: unknown) => error instanceof SvcError && error.code === 'starting');
    assert.equal(seen.length, 1);
  });

  it("explains a HEAD answered with an error (no body) by asking the same path with GET, which carries svc's error", async () => {
    const cutOff = JSON.stringify({
      error: {
        code: 'not_leader',
        message: 'this svc replica lost the leadership because Consul at http://127.0.0.1:8500 does not answer.',
      },
    });
    answers.push(
      (res) => res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' }).end(),
      (res) => res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' }).end(cutOff),
    );
    const client = new ApiClient({ server: url, token: 't', leaderWaitMs: 0 });
    await assert.rejects(
      client.exists('/api/v1/bundles/abc'),
      (error: unknown) =>
        error instanceof SvcError && error.code === 'not_leader' && /Consul at http:\/\/127\.0\.0\.1:8500/.test(error.message),
    );
    assert.deepEqual(
      seen.map((r) => r.method),
      ['HEAD', 'GET'],
    );
  });

  it('stops waiting for a leader at once when its signal aborts (Ctrl-C), with the not_leader error', async () => {
    answers.push(standby, standby, standby);
    const client = new ApiClient({ server: url, token: 't' });
    const abort = new AbortController();
    const started = Date.now();
    setTimeout(() => abort.abort(), 200);
    await assert.rejects(
      client.json('GET', '/api/v1/whoami', { signal: abort.signal }),
      (error: unknown) => error instanceof SvcError && error.code === 'not_leader',
    );
    assert.ok(Date.now() - started < 900, `gave up ${Date.now() - started} ms after the start, not after Retry-After (1 s)`);
    assert.equal(seen.length, 1);
  });
});
