/**
 * HTTPS end to end: a platform with a default certificate, a per-domain one
 * and the plain-HTTP redirect, real Python containers behind it, and real
 * clients: curl (SNI by --resolve, trusting only the test certificates),
 * `ws` over wss, an SSE stream read while its handler still runs.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import WebSocket from 'ws';
import type { Deployment } from '../../core/services/deployments/types.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { curl, loopback, makeCertificate, servedCn, type TestCertificate } from '../helpers/tls.js';

describe('HTTPS on the gateway (real containers, real TLS clients)', function () {
  this.timeout(180_000);
  let platform: Platform;
  let live: Deployment;
  let streaming: Deployment;
  let echo: Deployment;
  let main: TestCertificate;
  let site: TestCertificate;
  const workload = (deployment: Deployment, name: string) => deployment.workloads.find((w) => w.name === name)!;
  const auth = () => ({ Authorization: `Bearer ${platform.ownerToken.secret}` });
  const port = () => Number(new URL(platform.url).port);

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

  /** Opens a wss connection trusting `ca`, sends `message`, resolves the first `count` answers. */
  function talk(url: string, ca: TestCertificate, message: string, count: number, headers: Record<string, string> = {}): Promise<string[]> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { headers, ca: readFileSync(ca.cert), lookup: loopback });
      const answers: string[] = [];
      socket.on('open', () => socket.send(message));
      socket.on('message', (data) => {
        answers.push(String(data));
        if (answers.length === count) {
          socket.close();
          resolve(answers);
        }
      });
      socket.on('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      socket.on('error', reject);
    });
  }

  before(async () => {
    const certs = tempDir('svc-tls-');
    const sites = tempDir('svc-sites-');
    // The default covers the loopback address clients use without a name.
    main = await makeCertificate(certs, 'default', ['localhost', 'svc.example.test'], 'svc default');
    site = await makeCertificate(sites, 'api', ['api.example.test'], 'api site');
    platform = await startPlatform({
      config: testConfig({ host: '127.0.0.1', tlsCert: main.cert, tlsKey: main.key, tlsCertDir: sites, httpPort: 0, httpsRedirect: true }),
    });
    live = await deploy('live.py');
    streaming = await deploy('streaming.py');
    echo = await deploy('echo.py');
  });
  after(async () => platform?.close());

  it('prints https:// and wss:// URLs, and says where plain HTTP listens', () => {
    assert.match(platform.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(workload(live, 'web').url, `${platform.url}/default/live/web`);
    assert.equal(workload(live, 'talk').url, `wss://127.0.0.1:${port()}/default/live/talk`);
    assert.match(platform.plainHttp!.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(platform.plainHttp!.redirects, true);
  });

  it('chooses the certificate by SNI: the domain its own, any other name the default (openssl s_client, curl)', async () => {
    assert.equal(await servedCn(port(), 'api.example.test'), 'api site');
    assert.equal(await servedCn(port(), 'svc.example.test'), 'svc default');
    const answer = await curl(`https://api.example.test:${port()}/default/live/web/page`, { ca: site.cert, headers: auth() });
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.body), { path: '/default/live/web/page', root_path: '/default/live/web', started: true });
    // The platform's own routes are served over TLS too.
    assert.equal((await curl(`https://svc.example.test:${port()}/_svc/health`, { ca: main.cert })).status, 200);
  });

  it('tells workloads the client came over HTTPS (X-Forwarded-Proto), whatever the client claims', async () => {
    const answer = await curl(`${workload(echo, 'private').url!.replace('127.0.0.1', 'svc.example.test')}?size=1`, {
      ca: main.cert,
      headers: { ...auth(), 'X-Forwarded-Proto': 'http' },
    });
    assert.equal(answer.status, 200);
    assert.equal((JSON.parse(answer.body) as { headers: Record<string, string> }).headers['x-forwarded-proto'], 'https');
  });

  it('redirects plain HTTP to HTTPS with 308, keeping the path and query', async () => {
    const plainPort = new URL(platform.plainHttp!.url).port;
    const answer = await curl(`http://api.example.test:${plainPort}/default/live/web/page?x=1`);
    assert.deepEqual([answer.status, answer.redirect], [308, `https://api.example.test:${port()}/default/live/web/page?x=1`]);
  });

  it('bridges WebSockets over TLS (wss) to a realtime handler and to an ASGI app', async () => {
    assert.deepEqual(await talk(workload(live, 'talk').url!.replace('127.0.0.1', 'svc.example.test'), main, 'count', 3, auth()), [
      '1',
      '2',
      '3',
    ]);
    const web = `wss://api.example.test:${port()}/default/live/web/socket`;
    assert.deepEqual(await talk(web, site, 'hi', 2, auth()), ['query:', 'echo:hi']);
  });

  it('streams Server-Sent Events over TLS while the handler still runs', async () => {
    const flag = path.join(tempDir('svc-sse-'), 'flag');
    const url = new URL(`${workload(streaming, 'events').url!}?flag=${encodeURIComponent(flag)}`);
    const response = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      https
        .get(
          {
            host: '127.0.0.1',
            port: url.port,
            path: `${url.pathname}${url.search}`,
            servername: 'svc.example.test',
            ca: readFileSync(main.cert),
          },
          resolve,
        )
        .on('error', reject);
    });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/event-stream/);
    const chunks = response.setEncoding('utf8')[Symbol.asyncIterator]();
    const first = (await chunks.next()).value as string;
    assert.deepEqual(JSON.parse(first.replace(/^data: /, '')), { i: 0 });
    assert.equal(existsSync(flag), false, 'the first event came while the handler waited');
    writeFileSync(flag, '');
    let rest = '';
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) rest += next.value as string;
    assert.deepEqual(JSON.parse(rest.replace(/^data: /, '')), { i: 1 });
  });
});
