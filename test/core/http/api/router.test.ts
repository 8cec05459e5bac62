import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { apiRoutes } from '../../../../core/http/api/index.js';
import { apiRouter } from '../../../../core/http/api/router.js';
import { pathParameterNames } from '../../../../core/http/api/declared-parameters.js';
import type { ApiRoute, ApiServices } from '../../../../core/http/api/types.js';
import { SvcError } from '../../../../core/model/errors.js';
import { errorMiddleware } from '../../../../core/traffic/gateway/error-middleware.js';
import type { GatewayState } from '../../../../core/traffic/gateway/types.js';
import { apiClient, postChunked, type Call } from './client.js';
import { startApiPlatform, type ApiFixture } from './platform.js';

/** A path for the route with its parameters filled in. */
const concrete = (path: string) => `/api/v1${path.replace(':id', 'tok_000000000000')}`;
const PUBLIC = ['GET /bundles/:sha256/artifact', 'POST /device/code', 'POST /device/token', 'POST /sign-in'];

describe('API routing, authentication and limits', () => {
  let f: ApiFixture;
  before(async () => (f = await startApiPlatform()));
  after(async () => f?.platform.close());
  afterEach(() => assert.deepEqual(f.reports, [], 'no unexpected errors'));

  it('needs a bearer token on every route but the device-flow and sign-in endpoints', async () => {
    const publicRoutes = apiRoutes.filter((r) => r.auth === 'none').map((r) => `${r.method} ${r.path}`);
    assert.deepEqual(publicRoutes.sort(), [...PUBLIC].sort());
    for (const route of apiRoutes.filter((r) => r.auth === 'token')) {
      const missing = await f.call(route.method, concrete(route.path), route.body === 'none' ? {} : { json: {} });
      assert.equal(missing.status, 401, `${route.method} ${route.path} without a token`);
      assert.equal(missing.json.error.code, 'unauthorized');
      assert.equal(missing.headers.get('www-authenticate'), 'Bearer');
      assert.match(missing.json.error.hint, /owner-token/);
      const wrong = await f.call(route.method, concrete(route.path), {
        token: `svc_${'x'.repeat(40)}`,
        ...(route.body === 'none' ? {} : { json: {} }),
      });
      assert.equal(wrong.status, 401, `${route.method} ${route.path} with an unknown token`);
    }
  });

  it('answers 404 not_found for an unknown API path, naming where the routes are', async () => {
    for (const path of ['/api/v1/nothing', '/api/v2/whoami', '/api', '/api/v1/tokens/']) {
      const answer = await f.call('GET', path, { token: f.owner });
      assert.equal(answer.status, 404, path);
      assert.equal(answer.json.error.code, 'not_found');
      assert.match(answer.json.error.hint, /docs\/api\.md/);
    }
  });

  it('answers 405 with Allow for a method a route does not take, and HEAD like GET', async () => {
    const answer = await f.call('PUT', '/api/v1/tokens', { token: f.owner, json: {} });
    assert.equal(answer.status, 405);
    assert.equal(answer.json.error.code, 'method_not_allowed');
    assert.equal(answer.headers.get('allow'), 'POST, GET, HEAD');
    const head = await f.call('HEAD', '/api/v1/whoami', { token: f.owner });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
  });

  it('refuses query parameters, which no route takes', async () => {
    const answer = await f.call('GET', '/api/v1/tokens?limit=5', { token: f.owner });
    assert.equal(answer.status, 400);
    assert.match(answer.json.error.message, /takes no query parameters/);
  });

  it('answers 413 for a declared body over 1 MiB before authenticating, and for a chunked one as it streams', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024) });
    const declared = await f.call('POST', '/api/v1/tokens', { body: big, headers: { 'Content-Type': 'application/json' } });
    assert.equal(declared.status, 413);
    assert.equal(declared.json.error.code, 'payload_too_large');
    assert.match(declared.json.error.message, /1 MiB/);
    const chunked = await postChunked(`${f.platform.url}/api/v1/tokens`, 2 * 1024 * 1024, {
      Authorization: `Bearer ${f.owner}`,
      'Content-Type': 'application/json',
    });
    assert.equal(chunked.status, 413);
    assert.equal(JSON.parse(chunked.body).error.code, 'payload_too_large');
    const justUnder = await f.call('POST', '/api/v1/tokens', { token: f.owner, json: { name: 'ci', pad: ' '.repeat(1000) } });
    assert.equal(justUnder.status, 400, 'a body under the limit is read (and its unknown field refused)');
  });

  it("keeps the health route; /login is the dashboard's sign-in page with strict headers; /device sends a stranger to it", async () => {
    assert.equal((await f.call('GET', '/_svc/health')).status, 200);
    const login = await f.call('GET', '/login');
    assert.equal(login.status, 200);
    assert.match(login.headers.get('content-type')!, /^text\/html/);
    assert.match(login.headers.get('content-security-policy')!, /default-src 'none'; script-src 'self'.*frame-ancestors 'none'/);
    assert.equal(login.headers.get('x-content-type-options'), 'nosniff');
    assert.match(login.text, /<form method="post" action="\/login"/);
    const device = await f.call('GET', '/device?user_code=ABCD-EFGH', { redirect: 'manual' });
    assert.equal(device.status, 303);
    assert.equal(device.headers.get('location'), '/login?next=%2Fdevice%3Fuser_code%3DABCD-EFGH');
  });

  it('sends a browser at / to the dashboard, and answers an API client there as before (401 JSON)', async () => {
    const browser = await f.call('GET', '/', { headers: { Accept: 'text/html,application/xhtml+xml,*/*;q=0.8' }, redirect: 'manual' });
    assert.equal(browser.status, 303);
    assert.equal(browser.headers.get('location'), '/dashboard');
    const api = await f.call('GET', '/');
    assert.equal(api.status, 401);
    assert.equal(api.json.error.code, 'unauthorized');
  });

  it('still answers 401 for unknown URLs outside the API without a token', async () => {
    assert.equal((await f.call('GET', '/default/nothing/here')).status, 401);
  });
});

describe('apiRouter() path parameters', () => {
  let server: ReturnType<Koa['listen']>;
  let call: Call;
  /** A public route that answers its decoded parameters, each declared as any string. */
  const echo = (method: ApiRoute['method'], path: string): ApiRoute => ({
    method,
    path,
    auth: 'none',
    body: 'none',
    openapi: {
      operationId: 'echo',
      summary: 'Echo.',
      parameters: pathParameterNames({ path }).map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
      responses: {},
    },
    handle: async ({ params }) => ({ status: 200, body: params }),
  });
  before(async () => {
    const app = new Koa<GatewayState>();
    app.use(async (ctx, next) => {
      ctx.state.requestId = 'req_test';
      await next();
    });
    app.use(errorMiddleware(() => {}));
    app.use(
      apiRouter(
        [echo('GET', '/tokens'), echo('DELETE', '/tokens/:id'), echo('GET', '/apps/:app/deployments/:workload')],
        {} as ApiServices,
      ),
    );
    server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    call = apiClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { checked: false }); // echo routes, not the API's
  });
  after(() => server?.close());

  it('matches fixed segments and decodes parameters', async () => {
    assert.deepEqual((await call('GET', '/api/v1/tokens')).json, {});
    assert.deepEqual((await call('DELETE', '/api/v1/tokens/tok_1')).json, { id: 'tok_1' });
    assert.deepEqual((await call('DELETE', '/api/v1/tokens/a%20b')).json, { id: 'a b' });
    assert.deepEqual((await call('DELETE', '/api/v1/tokens/a%2Fb')).json, { id: 'a/b' });
    assert.deepEqual((await call('GET', '/api/v1/apps/shop/deployments/web')).json, { app: 'shop', workload: 'web' });
  });

  it('matches nothing else: an empty parameter, more segments, another name, another case', async () => {
    for (const [method, path] of [
      ['DELETE', '/api/v1/tokens/'],
      ['DELETE', '/api/v1/tokens/a/b'],
      ['GET', '/api/v1/token'],
      ['GET', '/api/v1/Tokens'],
      ['GET', '/api/v1/tokens/'],
    ]) {
      const answer = await call(method!, path!);
      assert.equal(answer.status, 404, `${method} ${path}`);
      assert.equal(answer.json.error.code, 'not_found');
    }
  });

  it('refuses a parameter that is not valid percent-encoding, before it says which methods the path takes', async () => {
    for (const method of ['DELETE', 'PUT']) {
      const answer = await call(method, '/api/v1/tokens/%zz');
      assert.equal(answer.status, 400, method);
      assert.match(answer.json.error.message, /"%zz" is not valid percent-encoding/);
    }
  });

  it('checks declared query parameters: unknown names, then a missing one, then each value, as the route declares', async () => {
    const signed: ApiRoute = {
      ...echo('GET', '/signed/:id'),
      openapi: {
        operationId: 'signed',
        summary: 'Signed.',
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
          ...['expires', 'signature'].map((name) => ({
            name,
            in: 'query' as const,
            required: true,
            schema: { type: 'string', pattern: '^[0-9]+$' },
            refusal: {
              code: 'forbidden' as const,
              refuse: (value: string | undefined) =>
                new SvcError('forbidden', value === undefined ? `${name} missing` : `${name} malformed`),
            },
          })),
        ],
        responses: {},
      },
    };
    const app = new Koa<GatewayState>();
    app.use(errorMiddleware(() => {}));
    app.use(apiRouter([signed], {} as ApiServices));
    const own = app.listen(0, '127.0.0.1');
    await once(own, 'listening');
    try {
      const get = apiClient(`http://127.0.0.1:${(own.address() as AddressInfo).port}`, { checked: false });
      const message = async (query: string) => (await get('GET', `/api/v1/signed/x${query}`)).json.error?.message;
      assert.equal(
        await message('?expires=1&other=2'),
        'GET /api/v1/signed/x takes only the query parameters expires, signature, not "other".',
      );
      assert.equal(await message('?expires=x'), 'signature missing');
      assert.equal(await message('?expires=x&signature='), 'signature missing');
      assert.equal(await message('?expires=x&signature=1'), 'expires malformed');
      assert.equal(await message('?expires=1&signature=y'), 'signature malformed');
      assert.deepEqual((await get('GET', '/api/v1/signed/x?expires=1&signature=2')).json, { id: 'x' });
    } finally {
      own.close();
    }
  });
});
