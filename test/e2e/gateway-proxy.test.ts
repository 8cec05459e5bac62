import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import type { Deployment } from '../../core/services/deployments/types.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import { testConfig } from '../helpers/config.js';

interface Echo {
  path: string;
  headers: Record<string, string>;
  request_id?: string;
}

/** What the gateway passes on to a container, seen from inside a real one. */
describe('gateway proxying (real containers)', function () {
  this.timeout(180_000);
  let platform: Platform;
  let deployment: Deployment;
  const url = (name: string) => deployment.workloads.find((w) => w.name === name)!.url!;
  const auth = () => ({ Authorization: `Bearer ${platform.ownerToken.secret}` });

  before(async () => {
    const manifest = await loadManifest({ target: path.join(packageRoot, 'test', 'fixtures', 'apps', 'echo.py') });
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

  it('serves deployed apps without the preview suffix', () => {
    assert.equal(url('private'), `${platform.url}/default/echo/private/private`);
  });

  it('serves a workload named after a Python function with "_" under its label (say_hello → say-hello)', async () => {
    assert.equal(url('say-hello'), `${platform.url}/default/echo/say-hello/hello`);
    const response = await fetch(url('say-hello'));
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { path: '/hello', workload: 'say-hello' });
    assert.equal((await fetch(`${platform.url}/default/echo/say_hello/hello`)).status, 401, 'no URL under the Python name');
  });

  it('never hands the platform token to user code, but gives public workloads their own Authorization', async () => {
    const privateEcho = (await (await fetch(url('private'), { headers: auth() })).json()) as Echo;
    assert.equal(privateEcho.headers.authorization, undefined);
    const publicEcho = (await (await fetch(url('public'), { headers: { Authorization: 'Basic abc' } })).json()) as Echo;
    assert.equal(publicEcho.headers.authorization, 'Basic abc');
  });

  it("never hands a dashboard session (or its sign-in cookie) to any workload; the app's own cookies pass", async () => {
    const withCookies = (await (
      await fetch(url('public'), { headers: { Cookie: 'theme=dark; svc_session=stolen-if-forwarded; lang=en; svc_login_csrf=x' } })
    ).json()) as Echo;
    assert.equal(withCookies.headers.cookie, 'theme=dark; lang=en');
    const onlyOurs = (await (await fetch(url('public'), { headers: { Cookie: 'svc_session=stolen-if-forwarded' } })).json()) as Echo;
    assert.equal(onlyOurs.headers.cookie, undefined);
  });

  it('strips the URL prefix and keeps the query string', async () => {
    const echo = (await (await fetch(`${url('private')}/?size=3`, { headers: auth() })).json()) as Echo;
    assert.equal(echo.path, '/private/');
    assert.equal(echo.headers['x-forwarded-prefix'], '/default/echo/private');
    assert.equal(echo.headers['x-forwarded-proto'], 'http');
  });

  it('makes a request id, or passes a well-formed one through, and answers with it', async () => {
    const made = await fetch(url('private'), { headers: auth() });
    const madeId = made.headers.get('x-request-id');
    assert.match(madeId ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(((await made.json()) as Echo).request_id, madeId);

    const passed = await fetch(url('private'), { headers: { ...auth(), 'X-Request-Id': 'trace-42' } });
    assert.equal(passed.headers.get('x-request-id'), 'trace-42');
    assert.equal(((await passed.json()) as Echo).request_id, 'trace-42');

    const replaced = await fetch(url('private'), { headers: { ...auth(), 'X-Request-Id': 'bad id with spaces' } });
    assert.notEqual(replaced.headers.get('x-request-id'), 'bad id with spaces');
  });

  it('drops hop-by-hop headers', async () => {
    // fetch refuses to send these, so speak HTTP with node:http.
    const body = await new Promise<string>((resolve, reject) => {
      const request = http.get(
        url('public'),
        {
          headers: {
            Connection: 'keep-alive, X-Hop',
            'X-Hop': 'secret',
            'Keep-Alive': 'timeout=5',
            TE: 'trailers',
            'Proxy-Authorization': 'Basic x',
            'X-End': 'kept',
          },
        },
        (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString()));
          response.on('end', () => resolve(text));
        },
      );
      request.on('error', reject);
    });
    const echo = JSON.parse(body) as Echo;
    assert.equal(echo.headers['keep-alive'], undefined);
    assert.equal(echo.headers.te, undefined);
    assert.equal(echo.headers['proxy-authorization'], undefined);
    assert.equal(echo.headers['x-hop'], undefined, 'a header named in Connection is hop-by-hop too');
    assert.equal(echo.headers['x-end'], 'kept');
  });

  it('streams a large request body to the container', async () => {
    const data = 'x'.repeat(2 * 1024 * 1024);
    const response = await fetch(url('upload'), {
      method: 'POST',
      body: JSON.stringify({ data }),
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { length: data.length });
  });

  it('treats an encoded slash as part of a segment, never as a way around the route', async () => {
    const response = await fetch(`${platform.url}/default/echo%2Fpublic/public`);
    assert.equal(response.status, 401, 'an unknown prefix needs a token like any unknown URL');
    const withToken = await fetch(`${platform.url}/default/echo/private%2F..%2Fpublic/public`, { headers: auth() });
    assert.equal(withToken.status, 404);
  });
});
