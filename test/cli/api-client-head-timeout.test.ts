/**
 * The CLI's API client bounds how long a request waits for the head of its answer, and only that: a
 * body that comes slowly after its head, and a `long` request (a deploy waiting on builds), are not cut.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiClient } from '../../cli/api-client.js';
import { SvcError } from '../../core/model/errors.js';

describe('ApiClient: the bound on an answer’s head', () => {
  let server: http.Server;
  let url: string;
  const timers: NodeJS.Timeout[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      const later = (ms: number, then: () => void) => timers.push(setTimeout(then, ms));
      const json = { 'Content-Type': 'application/json' };
      if (req.url === '/head-late') later(600, () => res.writeHead(200, json).end('{"late":true}'));
      else if (req.url === '/body-late') {
        res.writeHead(200, json);
        res.write('{"slow":');
        later(600, () => res.end('true}'));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const timer of timers) clearTimeout(timer);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('refuses a head that does not come in time as server_unreachable, saying so', async () => {
    const client = new ApiClient({ server: url, headTimeoutMs: 200 });
    const started = Date.now();
    await assert.rejects(
      client.get('/head-late'),
      (error: unknown) => error instanceof SvcError && error.code === 'server_unreachable' && /no answer within 0\.2 s/.test(error.message),
    );
    assert.ok(Date.now() - started < 550, 'refused at the bound, not when the head came');
  });

  it('waits for a body that comes slowly after its head', async () => {
    const client = new ApiClient({ server: url, headTimeoutMs: 200 });
    assert.deepEqual(await client.get('/body-late'), { slow: true });
  });

  it('does not bound a long request', async () => {
    const client = new ApiClient({ server: url, headTimeoutMs: 200 });
    assert.deepEqual(await client.post('/head-late', undefined, { long: true }), { late: true });
  });
});
