import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NomadClient } from '../../../../core/infra/scheduler/nomad/client.js';
import { SvcError } from '../../../../core/model/errors.js';

/**
 * An agent that resets the connection of every other request as it arrives, as a kept-alive
 * connection closed by the agent's idle time-out looks to the client: nothing was answered.
 */
async function resettingAgent(): Promise<{ server: Server; url: string; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((request, response) => {
    seen.push(request.method!);
    if (seen.length % 2 === 1) {
      request.socket.resetAndDestroy();
      return;
    }
    response.setHeader('content-type', 'application/json');
    response.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe('NomadClient on a connection the agent reset', () => {
  it('sends a GET once more on a new connection, and never sends a write twice', async () => {
    const { server, url, seen } = await resettingAgent();
    try {
      const client = new NomadClient({ url });
      assert.deepEqual((await client.get('/v1/jobs')).body, { ok: true });
      assert.deepEqual(seen, ['GET', 'GET'], 'the read was sent twice');

      seen.length = 0;
      await assert.rejects(client.post('/v1/jobs', { Job: {} }), (error: unknown) => {
        assert.ok(error instanceof SvcError);
        assert.equal(error.code, 'scheduler_unreachable');
        assert.match(error.message, /POST \/v1\/jobs\): ECONNRESET/);
        return true;
      });
      assert.deepEqual(seen, ['POST'], 'the write was sent once');
    } finally {
      server.close();
    }
  });
});
