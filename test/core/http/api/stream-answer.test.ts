import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { pipeAnswer } from '../../../../core/http/api/stream-answer.js';

/** A server answering each request with `body()` through pipeAnswer. */
async function serving(body: () => PassThrough): Promise<{ server: Server; port: number }> {
  const server = createServer((_req, res) => {
    res.setHeader('Content-Type', 'application/x-ndjson');
    pipeAnswer(res, body());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port };
}

describe('pipeAnswer()', () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  it('streams the body as it comes and ends the answer with it', async () => {
    const body = new PassThrough();
    const served = await serving(() => body);
    server = served.server;
    body.write('{"type":"log"}\n'); // the head goes out with the first frame
    const answer = await fetch(`http://127.0.0.1:${served.port}/`);
    assert.equal(answer.headers.get('content-type'), 'application/x-ndjson');
    const reader = answer.body!.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), '{"type":"log"}\n'); // before the end
    body.end('{"type":"result"}\n');
    let rest = '';
    for (let part = await reader.read(); !part.done; part = await reader.read()) rest += new TextDecoder().decode(part.value);
    assert.equal(rest, '{"type":"result"}\n');
  });

  it('destroys the body when the client goes away', async () => {
    const body = new PassThrough();
    const served = await serving(() => body);
    server = served.server;
    body.write('{"type":"log"}\n');
    const client = request({ port: served.port, host: '127.0.0.1', path: '/' });
    client.end();
    const [response] = await once(client, 'response');
    await once(response, 'data');
    client.destroy();
    await once(body, 'close');
    assert.ok(body.destroyed);
  });

  it('breaks the answer when the body fails', async () => {
    const body = new PassThrough();
    const served = await serving(() => body);
    server = served.server;
    body.write('{"type":"log"}\n');
    const answer = await fetch(`http://127.0.0.1:${served.port}/`);
    body.destroy(new Error('upstream broke'));
    await assert.rejects(answer.text());
  });
});
