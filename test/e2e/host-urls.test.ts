import assert from 'node:assert/strict';
import http from 'node:http';
import type { LookupFunction } from 'node:net';
import path from 'node:path';
import WebSocket from 'ws';
import type { Deployment } from '../../core/services/deployments/types.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import { testConfig } from '../helpers/config.js';

/** Every name resolves to this machine, as `*.localhost` does in browsers and curl. */
const loopback: LookupFunction = (_host, options, callback) => {
  if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers, lookup: loopback }, (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
      })
      .on('error', reject);
  });
}

/** Host-based URLs (`<app>-<workload>.<base domain>`) beside the path URLs, through real containers. */
describe('host-based workload URLs (real containers)', function () {
  this.timeout(180_000);
  let platform: Platform;
  let echo: Deployment;
  let live: Deployment;
  const workload = (deployment: Deployment, name: string) => deployment.workloads.find((w) => w.name === name)!;
  const auth = () => ({ Authorization: `Bearer ${platform.ownerToken.secret}` });

  async function deploy(fixture: string): Promise<Deployment> {
    const manifest = await loadManifest({ target: path.join(packageRoot, 'test', 'fixtures', 'apps', fixture) });
    return platform.deployments.deploy({
      spec: manifest.spec,
      source: { root: manifest.root, entry: manifest.spec.entry },
      workspace: DEFAULT_WORKSPACE,
      stage: 'deployed',
      principal: null,
    });
  }

  before(async () => {
    platform = await startPlatform({ config: testConfig({ baseDomain: 'localhost' }) });
    echo = await deploy('echo.py');
    live = await deploy('live.py');
  });
  after(async () => platform?.close());

  it('prints a host URL with the gateway port beside the path URL', () => {
    const port = new URL(platform.url).port;
    assert.equal(workload(echo, 'private').hostUrl, `http://echo-private.localhost:${port}/private`);
    assert.equal(workload(echo, 'private').url, `${platform.url}/default/echo/private/private`);
    assert.equal(workload(echo, 'say-hello').hostUrl, `http://echo-say-hello.localhost:${port}/hello`);
    assert.equal(workload(live, 'points').hostUrl, `ws://live-points.localhost:${port}`);
  });

  it('hands the container the whole path, with an empty forwarded prefix and the token removed', async () => {
    const answer = await get(`${workload(echo, 'private').hostUrl!}?size=2`, auth());
    assert.equal(answer.status, 200);
    assert.equal(answer.body.path, '/private');
    const headers = answer.body.headers as Record<string, string>;
    assert.equal(headers['x-forwarded-prefix'], '');
    assert.equal(headers.authorization, undefined);
    assert.equal(headers['x-forwarded-host'], new URL(workload(echo, 'private').hostUrl!).host);
  });

  it('keeps the same access rules: a token for private workloads, none for public ones', async () => {
    assert.equal((await get(workload(echo, 'private').hostUrl!)).status, 401);
    assert.equal((await get(workload(echo, 'public').hostUrl!)).status, 200);
  });

  it('gives an ASGI app an empty root_path, so its own URLs stay on the host', async () => {
    const answer = await get(`${workload(live, 'web').hostUrl!}/some/page`, auth());
    assert.deepEqual(answer.body, { path: '/some/page', root_path: '', started: true });
  });

  it('routes the base domain itself, and unknown hosts under it, by path', async () => {
    const port = new URL(platform.url).port;
    assert.equal((await get(`http://localhost:${port}/default/echo/public/public`)).status, 200);
    const unknown = await get(`http://nothing-here.localhost:${port}/default/echo/public/public`);
    assert.equal(unknown.status, 200, 'an unknown host name falls back to the path');
    const wrongPath = await get(`http://echo-public.localhost:${port}/default/echo/public/public`);
    assert.equal(wrongPath.status, 404, 'on a host URL the path is the route, not a path URL');
  });

  it('bridges WebSockets on host URLs too', async () => {
    const socket = new WebSocket(workload(live, 'points').hostUrl!, { lookup: loopback });
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const reply = new Promise<string>((resolve) => socket.once('message', (data) => resolve(data.toString())));
    socket.send(JSON.stringify({ x: 2, y: 3 }));
    assert.deepEqual(JSON.parse(await reply), { sum: 5 });
    socket.close();
  });

  it('keeps the host URL across a redeploy', async () => {
    const before = workload(echo, 'public').hostUrl;
    echo = await deploy('echo.py');
    assert.equal(workload(echo, 'public').hostUrl, before);
    assert.equal((await get(before!)).status, 200);
  });
});
