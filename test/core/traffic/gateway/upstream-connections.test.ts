import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Dispatcher } from 'undici';
import { POOL_OPTIONS } from '../../../../core/traffic/gateway/proxy.js';
import { UpstreamConnections } from '../../../../core/traffic/gateway/upstream-connections.js';

/** The answer's status and body, read by a plain dispatch handler as the gateway's Exchange does. */
function get(connections: UpstreamConnections, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let status = 0;
    const chunks: Buffer[] = [];
    const handler: Dispatcher.DispatchHandler = {
      onConnect: () => {},
      onHeaders: (code) => ((status = code), true),
      onData: (chunk) => (chunks.push(chunk), true),
      onComplete: () => resolve({ status, body: Buffer.concat(chunks).toString() }),
      onError: reject,
    };
    connections.dispatch({ method: 'GET', path, headers: [] }, handler);
  });
}

/**
 * The gateway's connections to one worker, against a real HTTP server that counts the connections
 * it was given: as many as requests were in flight at once, the warmest reused first, a broken one
 * never handed out again.
 */
describe('UpstreamConnections', () => {
  let server: http.Server;
  let connections: UpstreamConnections;
  const sockets = new Set<Socket>();
  let opened = 0;

  beforeEach(async () => {
    opened = 0;
    server = http.createServer((req, res) => {
      if (req.url === '/drop') return req.socket.destroy();
      const wait = Number(new URL(req.url!, 'http://x').searchParams.get('ms') ?? 0);
      setTimeout(() => res.end(`${req.socket.remotePort}`), wait);
    });
    server.on('connection', (socket: Socket) => {
      opened++;
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    connections = new UpstreamConnections(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, POOL_OPTIONS);
  });
  afterEach(async () => {
    await connections.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('opens as many connections as requests were in flight at once, and reuses them wave after wave', async () => {
    for (let wave = 0; wave < 5; wave++) {
      const answers = await Promise.all([0, 1, 2, 3].map(() => get(connections, '/?ms=20')));
      assert.deepEqual(
        answers.map((answer) => answer.status),
        [200, 200, 200, 200],
      );
    }
    assert.equal(opened, 4, 'four in flight at most: four connections, however many waves');
  });

  it('hands out the connection freed last first: one request after another takes one connection', async () => {
    const ports = new Set<string>();
    for (let i = 0; i < 20; i++) ports.add((await get(connections, '/')).body);
    assert.equal(ports.size, 1);
    assert.equal(opened, 1);
  });

  it('tells the handler when the worker drops the connection, and the next request still gets an answer', async () => {
    await assert.rejects(get(connections, '/drop'), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'UND_ERR_SOCKET');
      return true;
    });
    assert.equal((await get(connections, '/')).status, 200);
  });

  it('close() lets a request in flight finish, then closes every connection', async () => {
    const slow = get(connections, '/?ms=200');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const closed = connections.close();
    assert.equal((await slow).status, 200);
    await closed;
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(sockets.size, 0, 'no connection left open');
  });
});
