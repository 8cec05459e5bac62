/**
 * Certificates over ACME against a real ACME server (opt-in: `npm run
 * test:acme`): Let's Encrypt's pebble, from `PEBBLE_BIN` or PATH (svc's
 * repository builds none; the file is skipped, saying so, without it), and
 * dnsmasq on loopback, which both svc (the TXT record of the domain's
 * verification) and pebble (the domain's address, for HTTP-01) ask. On a
 * `team` workspace a domain is verified; svc orders its certificate, answers
 * pebble's HTTP-01 challenge on its plain-HTTP port, writes the certificate
 * into tlsCertDir, and serves the domain over HTTPS with it.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { loadManifest } from '../../core/infra/manifest-loader/load.js';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { findBinary } from '../cluster/agents.js';
import { tokenFor } from '../core/http/api/platform.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { requireDnsmasq, startDnsmasq, type Dnsmasq } from '../helpers/dnsmasq.js';
import { freePort } from '../helpers/free-port.js';
import { curl, makeCertificate } from '../helpers/tls.js';
import { until } from '../helpers/until.js';

const shop = path.join(packageRoot, 'test', 'fixtures', 'apps', 'domains.py');

/** curl's own words when it cannot fetch `url` trusting `ca` (for a failure's message); '' when it can. */
async function curlError(url: string, ca: string): Promise<string> {
  const { port, hostname } = new URL(url);
  try {
    await promisify(execFile)('curl', [
      '-sS',
      '--max-time',
      '5',
      '-o',
      '/dev/null',
      '--resolve',
      `${hostname}:${port}:127.0.0.1`,
      '--cacert',
      ca,
      url,
    ]);
    return '';
  } catch (error) {
    return String((error as { stderr?: string }).stderr ?? error).trim();
  }
}
describe('custom domains get certificates over ACME (pebble)', function () {
  this.timeout(240_000);
  let pebble: ChildProcess | null = null;
  let pebbleOutput = '';
  let dns: Dnsmasq | undefined;
  let platform: Platform | undefined;
  let pebbleCa: string;
  let management: number;
  /** svc's own log lines (its ACME steps among them), for a failure's message. */
  const svcLog: string[] = [];

  /** GET over HTTPS trusting `ca` (pebble's management API, svc's API). */
  const get = (url: string, ca: Buffer, headers: Record<string, string> = {}, method = 'GET', body?: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      // Pebble refuses a request without a User-Agent, as RFC 8555 (section 6.1) lets a server do.
      const request = https.request(url, { method, ca, headers: { 'User-Agent': 'svc-tests', ...headers }, family: 4 }, (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      });
      request.on('error', reject);
      request.end(body);
    });

  before(async function () {
    const binary = findBinary('PEBBLE_BIN', 'pebble');
    if (binary === null) {
      console.log(
        '      skipped: needs pebble (set PEBBLE_BIN or put pebble on PATH; build it from letsencrypt/pebble with go build ./cmd/pebble)',
      );
      this.skip();
    }
    requireDnsmasq(this);
    dns = await startDnsmasq();
    const dir = tempDir('svc-pebble-');
    const own = await makeCertificate(dir, 'pebble', ['localhost']);
    pebbleCa = own.cert;
    const [listen, httpPort] = [await freePort(), await freePort()];
    management = await freePort();
    writeFileSync(
      path.join(dir, 'pebble.json'),
      JSON.stringify({
        pebble: {
          listenAddress: `127.0.0.1:${listen}`,
          managementListenAddress: `127.0.0.1:${management}`,
          certificate: own.cert,
          privateKey: own.key,
          httpPort,
          tlsPort: await freePort(),
          ocspResponderURL: '',
          externalAccountBindingRequired: false,
        },
      }),
    );
    // No random nonce rejections nor validation sleeps: the test is about svc, not about pebble's chaos.
    pebble = spawn(binary!, ['-config', path.join(dir, 'pebble.json'), '-dnsserver', dns.address], {
      env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    pebble.stdout!.on('data', (chunk: Buffer) => (pebbleOutput += chunk.toString()));
    pebble.stderr!.on('data', (chunk: Buffer) => (pebbleOutput += chunk.toString()));
    await until(
      'pebble answers',
      async () => (await get(`https://localhost:${listen}/dir`, readFileSync(pebbleCa)).catch(() => null))?.status === 200,
      { timeoutMs: 30_000, context: () => pebbleOutput },
    );

    const certs = tempDir('svc-certs-');
    const main = await makeCertificate(certs, 'main', ['localhost']);
    platform = await startPlatform({
      logs: (line) => svcLog.push(line.text),
      report: (error) => svcLog.push(`reported: ${(error as Error).message}`),
      config: testConfig({
        host: '127.0.0.1',
        tlsCert: main.cert,
        tlsKey: main.key,
        tlsCertDir: tempDir('svc-sites-'),
        httpPort,
        acmeDirectory: `https://localhost:${listen}/dir`,
        acmeCa: pebbleCa,
        dnsResolver: dns.address,
      }),
    });
  });
  after(async () => {
    await platform?.close();
    pebble?.kill('SIGTERM');
    await dns?.stop();
  });

  it('orders the certificate of a verified domain, answering HTTP-01 itself, and serves the domain over HTTPS with it', async () => {
    const ca = readFileSync(pebbleCa);
    const api = (p: string, token: string, method = 'GET', json?: unknown) =>
      get(
        `${platform!.url.replace('127.0.0.1', 'localhost')}${p}`,
        readFileSync(path.join(path.dirname(platform!.config.tlsCert!), 'main.crt')),
        { Authorization: `Bearer ${token}`, ...(json === undefined ? {} : { 'Content-Type': 'application/json' }) },
        method,
        json === undefined ? undefined : JSON.stringify(json),
      );
    const token = (await tokenFor(platform!, 'acme', 'acc_000000000000ac11')).secret;
    assert.equal((await api('/api/v1/workspaces/acme/plan', platform!.ownerToken.secret, 'PUT', { plan: 'team' })).status, 200);
    const manifest = await loadManifest({ target: shop });
    await platform!.deployments.deploy({
      spec: manifest.spec,
      source: { root: manifest.root, entry: manifest.spec.entry },
      workspace: 'acme',
      stage: 'deployed',
      principal: null,
    });
    const [pending] = JSON.parse((await api('/api/v1/domains', token)).text).domains;
    // The TXT record for svc's verification, and the domain's address for pebble's HTTP-01 request.
    await dns!.publish({ [pending.record.name]: pending.record.value }, { 'api.example.test': '127.0.0.1' });
    const verified = await api('/api/v1/domains/api.example.test/verify', token, 'POST', {});
    assert.equal(JSON.parse(verified.text).status, 'verified', verified.text);

    // Pebble's root, which signed the chain svc now serves for the domain.
    const root = (await get(`https://localhost:${management}/roots/0`, ca)).text;
    const rootFile = path.join(tempDir('svc-pebble-root-'), 'root.pem');
    writeFileSync(rootFile, root);
    const port = new URL(platform!.url).port;
    const url = `https://api.example.test:${port}/orders?id=7`;
    let lastCurl = '';
    await until(
      'the domain is served with a certificate pebble issued',
      async () => {
        const answer = await curl(url, { ca: rootFile, headers: { Authorization: `Bearer ${token}` } }).catch(() => ({ status: 0 }));
        if (answer.status !== 200) lastCurl = await curlError(url, rootFile);
        return answer.status === 200;
      },
      {
        timeoutMs: 30_000,
        intervalMs: 500,
        context: () =>
          `curl: ${lastCurl}\n${svcLog.filter((line) => /ACME|TLS|reported|certificate/.test(line)).join('\n')}\n${pebbleOutput.slice(-1500)}`,
      },
    );
    const answer = await curl(url, { ca: rootFile, headers: { Authorization: `Bearer ${token}` } });
    assert.deepEqual(JSON.parse(answer.body), { app: 'shop', path: '/orders', root_path: '' });
    assert.match(pebbleOutput, /api\.example\.test/, 'pebble validated the domain');
  });
});
