import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { captureApi, type ContainerRequest } from '../../../../core/services/app-api/capture.js';

/** A stand-in app: each path answers as the test says; what it was sent is kept. */
const routes: Record<string, (request: http.IncomingMessage, response: http.ServerResponse) => void> = {
  '/openapi.json': (request, response) => {
    response.writeHead(200, { 'Content-Type': 'application/json' });
    response.end(
      JSON.stringify({
        openapi: '3.1.0',
        servers: [{ url: request.headers['x-forwarded-prefix'] }],
        paths: { '/a': { get: {}, post: {} }, '/b': { get: { parameters: [{ in: 'query' }] } } },
      }),
    );
  },
  '/html': (_, response) => response.end('<html>docs</html>'),
  '/swagger': (_, response) => response.end(JSON.stringify({ swagger: '2.0', paths: {} })),
  '/large': (_, response) => response.end(JSON.stringify({ openapi: '3.1.0', pad: 'x'.repeat(2000) })),
  '/large-chunked': (_, response) => {
    response.writeHead(200, { 'Transfer-Encoding': 'chunked' });
    for (let i = 0; i < 10; i++) response.write('x'.repeat(500));
    response.end();
  },
  '/silent': () => {},
};

describe('captureApi()', () => {
  let server: http.Server;
  let pool: Pool;
  const send: ContainerRequest = (options) => pool.request(options);

  before(async () => {
    server = http.createServer((request, response) => {
      const route = routes[request.url!];
      if (route) route(request, response);
      else {
        response.writeHead(404);
        response.end('{"detail":"Not Found"}');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  after(async () => {
    await pool.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const capture = (source: string, extra: { timeoutMs?: number; maxBytes?: number } = {}) =>
    captureApi(send, { source, prefix: '/default/shop/web', version: 4, ...extra });

  it('keeps the document with the version, sent with the workload prefix, and counts its operations and what it left out', async () => {
    const outcome = await capture('/openapi.json');
    assert.equal(outcome.capture?.version, 4);
    assert.equal(outcome.capture?.source, '/openapi.json');
    assert.deepEqual(outcome.capture?.document.servers, [{ url: '/default/shop/web' }]);
    assert.match(
      outcome.message,
      /^OpenAPI description captured from \/openapi\.json, 3 operations; left out: GET \/b: a parameter without a name; left out$/,
    );
  });

  it('says why there is none: a 404, not JSON, not OpenAPI 3.x, too large (declared or streamed), no answer in time', async () => {
    const cases: [string, RegExp, { timeoutMs?: number; maxBytes?: number }?][] = [
      ['/missing.json', /^no OpenAPI description: \/missing\.json answered HTTP 404$/],
      ['/html', /^no OpenAPI description: \/html answered something that is not JSON$/],
      ['/swagger', /^no OpenAPI description: \/swagger is no OpenAPI 3\.x description: it is Swagger 2\.0, not OpenAPI 3\.x$/],
      [
        '/large',
        /^no OpenAPI description: \/large is larger than 1 KiB, more than svc keeps \(it is stored with the deployment, and a state value ends at 512 KiB\)$/,
        { maxBytes: 1024 },
      ],
      ['/large-chunked', /is larger than 1 KiB/, { maxBytes: 1024 }],
      ['/silent', /^no OpenAPI description: \/silent gave no answer within 0\.2 s$/, { timeoutMs: 200 }],
    ];
    for (const [source, expected, extra] of cases) {
      const outcome = await capture(source, extra);
      assert.equal(outcome.capture, null, source);
      assert.match(outcome.message, expected);
    }
  });
});
