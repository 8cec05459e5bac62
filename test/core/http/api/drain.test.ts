import assert from 'node:assert/strict';
import http from 'node:http';
import { startApiPlatform } from './platform.js';

describe('Platform#close() with an API request in flight', () => {
  it('lets the request finish (its body still arriving) before the server and the store close', async () => {
    const f = await startApiPlatform();
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.request(
        `${f.platform.url}/api/v1/tokens`,
        {
          method: 'POST',
          headers: { Authorization: `Bearer ${f.owner}`, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
        },
        (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk.toString()));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        },
      );
      request.on('error', reject);
      request.write('{"name": ');
      // Once the server answered another request, it has read this one's head: it is in flight.
      void fetch(`${f.platform.url}/_svc/health`)
        .then(async (health) => {
          await health.text();
          const closing = f.platform.close();
          request.end('"drained"}');
          await closing;
        })
        .catch(reject);
    });
    const { status, body } = await answer;
    assert.equal(status, 201, body);
    assert.equal(JSON.parse(body).name, 'drained');
    assert.deepEqual(f.reports, []);
  });
});
