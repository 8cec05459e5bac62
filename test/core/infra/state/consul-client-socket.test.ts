/**
 * What svc's Consul adapter (core/infra/state/consul-client.ts, the npm `consul`
 * package underneath) promises about its connections, checked against a TCP
 * server that never answers, so that only the client's side decides: an
 * abort closes the socket of a blocking query, a call with no answer ends at
 * its timeout, and no more than `maxSockets` connections are ever open.
 * (test/cluster/consul-client.test.ts checks the answers of a real agent.)
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import net from 'node:net';
import { ConsulClient } from '../../../../core/infra/state/consul-client.js';
import { until } from '../../../helpers/until.js';

describe('ConsulClient connections (a server that never answers)', function () {
  this.timeout(30_000);
  let server: net.Server;
  let address: string;
  const open = new Set<net.Socket>();
  let accepted = 0;
  const clients: ConsulClient[] = [];
  const client = (options: { timeoutMs?: number; maxSockets?: number } = {}) => {
    const made = new ConsulClient({ address, ...options });
    clients.push(made);
    return made;
  };

  beforeEach(async () => {
    accepted = 0;
    server = net.createServer((socket) => {
      accepted += 1;
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => {});
      socket.resume(); // reads (and drops) the request, so that the client closing it is seen
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    address = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  });
  afterEach(async () => {
    for (const made of clients.splice(0)) made.close();
    for (const socket of open) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('closes the connection of a blocking query when its signal aborts, and rejects with the reason', async () => {
    const controller = new AbortController();
    const reading = client().kvGet('svc/a', { block: { index: 7, waitMs: 60_000 }, signal: controller.signal });
    await until('the query reached the server', () => open.size === 1);
    const reason = new Error('stopped watching');
    controller.abort(reason);
    await assert.rejects(reading, (error) => error === reason);
    await until('its socket is closed, before the client is', () => open.size === 0);
  });

  it('ends a call that gets no answer at its timeout', async () => {
    await assert.rejects(client({ timeoutMs: 200 }).kvGet('svc/a'), /time|socket hang up/i);
  });

  it('opens no more than maxSockets connections: further calls wait for one', async () => {
    const consul = client({ maxSockets: 2 });
    const controller = new AbortController();
    const reads = [0, 1, 2, 3, 4].map(() =>
      consul.kvGet('svc/a', { block: { index: 7, waitMs: 60_000 }, signal: controller.signal }).catch(() => undefined),
    );
    await until('two queries reached the server', () => accepted === 2);
    await new Promise((resolve) => setTimeout(resolve, 200)); // room for a third connection, were there one
    assert.equal(accepted, 2);
    controller.abort();
    await Promise.all(reads);
  });
});

describe('ConsulClient kept-alive connections (a server that answers)', function () {
  this.timeout(30_000);
  let server: net.Server;
  let address: string;
  let requests: string[];
  let closedByClient: number;
  let resetNext: boolean;
  const clients: ConsulClient[] = [];
  const client = (options: { idleSocketMs?: number } = {}) => {
    const made = new ConsulClient({ address, ...options });
    clients.push(made);
    return made;
  };

  beforeEach(async () => {
    requests = [];
    closedByClient = 0;
    resetNext = false;
    // keepAliveTimeout 0: the server keeps every connection open, so only the client closes one;
    // a reset stands for an agent whose idle time-out races a request.
    const http = createServer((request, response) => {
      requests.push(`${request.method} ${request.url?.split('?')[0]}`);
      if (resetNext) {
        resetNext = false;
        request.socket.resetAndDestroy();
        return;
      }
      response.writeHead(200, { 'X-Consul-Index': '3', 'Content-Type': 'application/json' });
      response.end(request.method === 'PUT' ? 'true' : '[]');
    });
    http.keepAliveTimeout = 0;
    http.on('connection', (socket: net.Socket) => socket.on('end', () => (closedByClient += 1)));
    server = http;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    address = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  });
  afterEach(async () => {
    for (const made of clients.splice(0)) made.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('closes a kept-alive connection once it has been unused for idleSocketMs, before the agent would', async () => {
    const consul = client({ idleSocketMs: 300 });
    await consul.kvGet('svc/a');
    assert.equal(closedByClient, 0, 'the connection stays open right after the call');
    await until('the client closed the idle connection', () => closedByClient === 1, 5000);
    await consul.kvGet('svc/a'); // a new connection serves the next call
    assert.equal(requests.length, 2);
  });

  it('sends a read once more when the agent resets its connection, and a write never twice', async () => {
    const consul = client();
    resetNext = true;
    const read = await consul.kvGet('svc/a');
    assert.deepEqual(read.value, []);
    assert.deepEqual(requests, ['GET /v1/kv/svc%2Fa', 'GET /v1/kv/svc%2Fa']);
    resetNext = true;
    await assert.rejects(consul.kvSet('svc/a', Buffer.from('x')), (error: { code?: string }) => error.code === 'ECONNRESET');
    assert.equal(requests.filter((r) => r.startsWith('PUT')).length, 1);
  });
});
