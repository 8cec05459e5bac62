/**
 * What svc's Consul adapter (core/infra/state/consul-client.ts, the npm `consul`
 * package underneath) promises about its connections, checked against a TCP
 * server that never answers, so that only the client's side decides: an
 * abort closes the socket of a blocking query, a call with no answer ends at
 * its timeout, and no more than `maxSockets` connections are ever open.
 * (test/cluster/consul-client.test.ts checks the answers of a real agent.)
 */
import assert from 'node:assert/strict';
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
