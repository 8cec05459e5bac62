import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import NodeWebSocket from 'ws';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { launchChromium, needChromium } from '../browser/chromium.js';
import { apiClient } from '../core/http/api/client.js';
import { testConfig } from '../helpers/config.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { upload } from './api-lifecycle-helpers.js';
import { bundleOfFolder } from './run-helpers.js';

const folder = path.join(packageRoot, 'test', 'fixtures', 'cors');

/**
 * Browsers of other origins (cors=svc.Cors): a real Chromium page, served on another origin than svc's,
 * fetch()es an authorized endpoint with a token and opens a realtime WebSocket; the gateway answers the
 * preflights itself, refuses origins the workload does not name, lets an ASGI app's preflight through
 * without a token (its own middleware answers it), and still asks every other request for one.
 */
describe('CORS: web pages of other origins (embedded platform, Chromium)', function () {
  this.timeout(180_000);
  let platform: Platform;
  let pageServer: Server;
  let page = '';
  let owner = '';
  const urls: Record<string, string> = {};
  let browser: Browser | undefined;

  before(async () => {
    pageServer = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>page</title>'));
    await new Promise<void>((resolve) => pageServer.listen(0, 'localhost', resolve));
    page = `http://localhost:${(pageServer.address() as AddressInfo).port}`;
    platform = await startPlatform({ config: testConfig() });
    owner = platform.ownerToken.secret;
    process.env.SVC_TEST_PAGE_ORIGIN = page;
    const manifest = await loadManifest({ target: path.join(folder, 'app.py') }).finally(() => delete process.env.SVC_TEST_PAGE_ORIGIN);
    const bundle = await bundleOfFolder(folder);
    assert.equal((await upload(platform.url, owner, bundle.bytes, bundle.sha256)).status, 201);
    const deployed = await apiClient(platform.url)('POST', '/api/v1/apps/cors-test/deployments', {
      token: owner,
      json: { manifest: manifest.raw, bundle: bundle.sha256 },
    });
    assert.equal(deployed.status, 201, deployed.text);
    for (const d of deployed.json.deployments as { workload: string; urls: { path: string } }[]) urls[d.workload] = d.urls.path;
  });
  after(async () => {
    await browser?.close();
    await platform?.close();
    pageServer?.close();
  });

  const preflight = (url: string, origin: string, method = 'POST', headers = 'authorization, content-type') =>
    fetch(url, {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': headers },
    });

  it('answers an allowed preflight itself (no token), and refuses another origin, method or header, naming it', async () => {
    const allowed = await preflight(urls.greet!, page);
    assert.equal(allowed.status, 204);
    assert.equal(allowed.headers.get('access-control-allow-origin'), page);
    assert.equal(allowed.headers.get('access-control-allow-methods'), 'POST');
    assert.equal(allowed.headers.get('access-control-allow-headers'), 'authorization, content-type');
    assert.equal(allowed.headers.get('access-control-max-age'), '600');
    assert.equal(allowed.headers.get('vary'), 'Origin');
    const evil = await preflight(urls.greet!, 'https://evil.example');
    assert.equal(evil.status, 403);
    assert.match(
      ((await evil.json()) as { error: { message: string } }).error.message,
      /pages of https:\/\/evil\.example may not call cors-test\/greet/,
    );
    assert.equal(evil.headers.get('access-control-allow-origin'), null);
    assert.equal((await preflight(urls.greet!, page, 'DELETE')).status, 403);
    assert.equal((await preflight(urls.greet!, page, 'POST', 'x-secret')).status, 403);
  });

  it('still asks the real request for its token, and its answers carry the CORS headers for the page to read', async () => {
    const refused = await fetch(urls.greet!, {
      method: 'POST',
      headers: { Origin: page, 'Content-Type': 'application/json' },
      body: '{"name":"a"}',
    });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('access-control-allow-origin'), page, 'the page can read why');
    const answered = await fetch(urls.greet!, {
      method: 'POST',
      headers: { Origin: page, Authorization: `Bearer ${owner}`, 'Content-Type': 'application/json' },
      body: '{"name":"a"}',
    });
    assert.equal(answered.status, 200);
    assert.equal(answered.headers.get('access-control-allow-origin'), page);
    const other = await fetch(urls.greet!, {
      method: 'POST',
      headers: { Origin: 'https://evil.example', Authorization: `Bearer ${owner}`, 'Content-Type': 'application/json' },
      body: '{"name":"a"}',
    });
    assert.equal(other.headers.get('access-control-allow-origin'), null, 'no CORS headers for an origin it does not name');
  });

  it("lets an ASGI app's preflight through without a token, and nothing else", async () => {
    const app = await preflight(`${urls.web}/things`, page, 'GET', 'authorization');
    assert.equal(app.status, 200);
    assert.equal(await app.text(), 'preflight answered by the app');
    assert.equal(
      (await fetch(`${urls.web}/things`, { method: 'OPTIONS', headers: { Origin: page } })).status,
      401,
      'an OPTIONS that is no preflight',
    );
    assert.equal((await fetch(`${urls.web}/things`, { headers: { Origin: page } })).status, 401);
  });

  it('lets a Chromium page of another origin fetch an authorized endpoint and talk to a realtime handler; refuses it elsewhere', async function () {
    needChromium(this);
    browser = await launchChromium();
    const tab = await browser.newPage();
    await tab.goto(page);
    const realtime = `${urls.shout!.replace(/^http/, 'ws')}?token=${encodeURIComponent(owner)}`;
    const seen = await tab.evaluate(
      async ({ greet, elsewhere, realtime, token }) => {
        const response = await fetch(greet, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: 'browser' }),
        });
        const greeted = await response.json();
        const refused = await fetch(elsewhere, { headers: { Authorization: `Bearer ${token}` } }).then(
          () => 'read',
          (error: Error) => error.name,
        );
        const shouted = await new Promise<string>((resolve, reject) => {
          const socket = new WebSocket(realtime);
          socket.onopen = () => socket.send('hi there');
          socket.onmessage = (event) => {
            resolve(String(event.data));
            socket.close();
          };
          socket.onerror = () => reject(new Error('the WebSocket failed'));
        });
        return { greeted, refused, shouted };
      },
      { greet: urls.greet!, elsewhere: urls.elsewhere!, realtime, token: owner },
    );
    assert.deepEqual(seen, { greeted: { message: 'Hello, browser' }, refused: 'TypeError', shouted: 'HI THERE' });
  });

  it('refuses a WebSocket from a page of an origin the realtime handler does not name', async () => {
    const refused = await new Promise<number>((resolve) => {
      const socket = new NodeWebSocket(`${urls.shout!.replace(/^http/, 'ws')}?token=${owner}`, {
        headers: { Origin: 'https://evil.example' },
      });
      socket.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      socket.on('open', () => resolve(101));
    });
    assert.equal(refused, 403);
  });
});
