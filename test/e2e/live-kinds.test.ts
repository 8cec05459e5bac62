import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import WebSocket from 'ws';
import type { Deployment } from '../../core/services/deployments/types.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import { testConfig } from '../helpers/config.js';

/** A WebSocket client that collects what it receives. */
async function connect(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ socket: WebSocket; next(): Promise<string>; closed: Promise<number> }> {
  const socket = new WebSocket(url, { headers });
  const inbox: string[] = [];
  const waiting: ((text: string) => void)[] = [];
  socket.on('message', (data) => {
    const text = data.toString();
    const waiter = waiting.shift();
    if (waiter) waiter(text);
    else inbox.push(text);
  });
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return {
    socket,
    closed,
    next: () => (inbox.length > 0 ? Promise.resolve(inbox.shift()!) : new Promise((resolve) => waiting.push(resolve))),
  };
}

/** ASGI and realtime workloads through the gateway and its WebSocket bridge, in real containers. */
describe('asgi and realtime workloads through the gateway', function () {
  this.timeout(120_000);
  let platform: Platform;
  let deployment: Deployment;
  const url = (name: string) => deployment.workloads.find((w) => w.name === name)!.url!;
  const bearer = () => ({ Authorization: `Bearer ${platform.ownerToken.secret}` });

  before(async () => {
    const manifest = await loadManifest({ target: path.join(packageRoot, 'test', 'fixtures', 'apps', 'live.py') });
    platform = await startPlatform({ config: testConfig() });
    deployment = await platform.deployments.deploy({
      spec: manifest.spec,
      source: { root: manifest.root, entry: manifest.spec.entry },
      workspace: DEFAULT_WORKSPACE,
      stage: 'deployed',
      principal: null,
    });
  });
  after(async () => platform?.close());

  it('gives the ASGI app an http URL and realtime handlers a ws URL', () => {
    assert.equal(url('web'), `${platform.url}/default/live/web`);
    assert.equal(url('talk'), `${platform.url.replace(/^http/, 'ws')}/default/live/talk`);
  });

  it('serves every route of the ASGI app with root_path set to the URL prefix, after its lifespan startup', async () => {
    const response = await fetch(`${url('web')}/any/route?x=1`, { headers: bearer() });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { path: '/default/live/web/any/route', root_path: '/default/live/web', started: true });
  });

  it("bridges the ASGI app's own WebSocket route", async () => {
    const client = await connect(`${url('web').replace(/^http/, 'ws')}/socket`, bearer());
    assert.equal(await client.next(), 'query:');
    client.socket.send('hi');
    assert.equal(await client.next(), 'echo:hi');
    client.socket.close(1000);
    assert.equal(await client.closed, 1000);
  });

  it('compresses the client side of the bridge (permessage-deflate) when the client offers it', async () => {
    const client = await connect(`${url('web').replace(/^http/, 'ws')}/socket`, bearer());
    assert.equal(client.socket.extensions, 'permessage-deflate', 'negotiated with the client');
    assert.equal(await client.next(), 'query:');
    const chatty = JSON.stringify(Array.from({ length: 400 }, (_, i) => ({ id: i, status: 'ok', tags: ['a', 'b'] })));
    const wire = (client.socket as unknown as { _socket: { bytesRead: number } })._socket;
    const before = wire.bytesRead;
    client.socket.send(chatty);
    assert.equal(await client.next(), `echo:${chatty}`);
    const received = wire.bytesRead - before;
    assert.ok(received < chatty.length / 4, `${chatty.length} bytes of JSON came back in ${received} bytes on the wire`);
    client.socket.close(1000);
  });

  it('takes ?token= on an upgrade but never lets it reach the app', async () => {
    const client = await connect(`${url('web').replace(/^http/, 'ws')}/socket?token=${platform.ownerToken.secret}&x=1`);
    assert.equal(await client.next(), 'query:x=1');
    client.socket.close();
  });

  it('calls a realtime handler once per message, sending an iterable result one message per item', async () => {
    const client = await connect(`${url('talk')}?token=${platform.ownerToken.secret}`);
    client.socket.send('hello');
    assert.equal(await client.next(), 'HELLO');
    client.socket.send('count');
    assert.deepEqual([await client.next(), await client.next(), await client.next()], ['1', '2', '3']);
    client.socket.close();
  });

  it('answers a bad structured message with an error message and keeps the socket open', async () => {
    const client = await connect(url('points'));
    client.socket.send('{"x": 1}');
    const error = JSON.parse(await client.next()) as { error: { code: string; message: string } };
    assert.equal(error.error.code, 'invalid_arguments');
    assert.match(error.error.message, /y/);
    client.socket.send('{"x": 1, "y": 2}');
    assert.deepEqual(JSON.parse(await client.next()), { sum: 3 });
    client.socket.close();
  });

  it('streams a generator endpoint as Server-Sent Events through the gateway', async () => {
    const response = await fetch(`${url('ticks')}?n=3`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = (await response.text())
      .split('\n\n')
      .filter(Boolean)
      .map((event) => JSON.parse(event.replace(/^data: /, '')));
    assert.deepEqual(events, [{ i: 0 }, { i: 1 }, { i: 2 }]);
  });

  it('gives the slot back when a handshake is malformed, so the workload stays reachable', async () => {
    // points takes one session at a time (concurrent_requests=1): a leaked slot would lock it.
    const { pathname, port } = new URL(url('points').replace(/^ws/, 'http'));
    for (let i = 0; i < 3; i++) {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(port), '127.0.0.1', () =>
          socket.write(`GET ${pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`),
        );
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      assert.match(answer, /^HTTP\/1\.1 400/);
    }
    const client = await connect(url('points'));
    client.socket.send('{"x": 2, "y": 2}');
    assert.deepEqual(JSON.parse(await client.next()), { sum: 4 });
    client.socket.close();
  });

  it('refuses a realtime upgrade without a token before the handshake', async () => {
    await assert.rejects(connect(url('talk')), /Unexpected server response: 401/);
  });
});
