/**
 * Issue 18's whole path in one test: on a `team` workspace a user deploys
 * `domain="api.example.test"`, publishes the TXT record svc shows (a real
 * DNS server, dnsmasq, on loopback), and then
 * `curl --resolve api.example.test:<port>:127.0.0.1 https://api.example.test:<port>/…`
 * with the token answers from that workload over TLS, with the domain's own
 * certificate (SNI), and so does a WebSocket from Python's `websockets`; on
 * `free` the deploy is refused saying why, and nothing changed.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { tokenFor } from '../core/http/api/platform.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { requireDnsmasq, startDnsmasq, type Dnsmasq } from '../helpers/dnsmasq.js';
import { curl, makeCertificate, servedCn } from '../helpers/tls.js';
import { runPython } from '../plugins/export-python/python-helpers.js';

const shop = path.join(packageRoot, 'test', 'fixtures', 'apps', 'domains.py');

describe('a custom domain over HTTPS, end to end (dnsmasq, openssl, curl)', function () {
  this.timeout(240_000);
  let dns: Dnsmasq | undefined;
  let platform: Platform;
  let site: string;
  let ca: Buffer;

  /** The API over HTTPS, trusting the server's default certificate (the CLI would need NODE_EXTRA_CA_CERTS). */
  const call = (method: string, urlPath: string, token: string, json?: unknown) =>
    new Promise<{ status: number; json: any; text: string }>((resolve, reject) => {
      const request = https.request(
        {
          host: '127.0.0.1',
          port: new URL(platform.url).port,
          path: urlPath,
          method,
          servername: 'localhost',
          ca,
          headers: { Authorization: `Bearer ${token}`, ...(json === undefined ? {} : { 'Content-Type': 'application/json' }) },
        },
        (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString()));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, json: text ? JSON.parse(text) : null, text }));
        },
      );
      request.on('error', reject);
      request.end(json === undefined ? undefined : JSON.stringify(json));
    });

  before(async function () {
    requireDnsmasq(this);
    dns = await startDnsmasq();
    const certs = tempDir('svc-certs-');
    const sites = tempDir('svc-sites-');
    const main = await makeCertificate(certs, 'main', ['localhost'], 'svc-default');
    ca = readFileSync(main.cert);
    site = (await makeCertificate(sites, 'api', ['api.example.test'])).cert;
    platform = await startPlatform({
      config: testConfig({ host: '127.0.0.1', tlsCert: main.cert, tlsKey: main.key, tlsCertDir: sites, dnsResolver: dns.address }),
    });
  });
  after(async () => {
    await platform?.close();
    await dns?.stop();
  });

  const deploy = async (workspace: string) => {
    const manifest = await loadManifest({ target: shop });
    return platform.deployments.deploy({
      spec: manifest.spec,
      source: { root: manifest.root, entry: manifest.spec.entry },
      workspace,
      stage: 'deployed',
      principal: null,
    });
  };

  it('on free: refused, saying why, nothing changed', async () => {
    await tokenFor(platform, 'thrifty', 'acc_0000000000007f11');
    await assert.rejects(
      deploy('thrifty'),
      (error: Error & { code: string }) =>
        error.code === 'plan_forbids_domain' &&
        /the workspace "thrifty" is on the free plan; custom domains need the team or business plan/.test(error.message),
    );
    assert.deepEqual(
      platform.deployments.list().filter((d) => d.ref.workspace === 'thrifty'),
      [],
    );
  });

  it('on team: deploy, publish the TXT record svc shows, verify, and curl https://api.example.test with the token answers from the workload', async () => {
    const token = (await tokenFor(platform, 'acme', 'acc_000000000000ac11')).secret;
    const planned = await call('PUT', '/api/v1/workspaces/acme/plan', platform.ownerToken.secret, { plan: 'team' });
    assert.equal(planned.status, 200, planned.text);
    await deploy('acme');
    const [pending] = (await call('GET', '/api/v1/domains', token)).json.domains;
    assert.deepEqual(
      [pending.domain, pending.status, pending.record.type, pending.record.name],
      ['api.example.test', 'pending', 'TXT', '_svc-challenge.api.example.test'],
    );
    const port = new URL(platform.url).port;
    const url = `https://api.example.test:${port}/orders?id=7`;
    assert.equal((await curl(url, { ca: site, headers: { Authorization: `Bearer ${token}` } })).status, 404, 'pending: not served');

    await dns!.publish({ [pending.record.name]: pending.record.value });
    const verified = await call('POST', '/api/v1/domains/api.example.test/verify', token, {});
    assert.equal(verified.json.status, 'verified', verified.text);

    assert.equal(await servedCn(Number(port), 'api.example.test'), 'api.example.test', "the domain's own certificate, chosen by SNI");
    const answer = await curl(url, { ca: site, headers: { Authorization: `Bearer ${token}` } });
    assert.equal(answer.status, 200, answer.body);
    assert.deepEqual(JSON.parse(answer.body), { app: 'shop', path: '/orders', root_path: '' });
    assert.equal((await curl(url, { ca: site })).status, 401, "the workload's auth rules hold on its domain");

    // A WebSocket over TLS from Python's websockets library: wss://api.example.test, the connection made to this machine.
    const script = [
      'import os, socket, ssl',
      'from websockets.sync.client import connect',
      'port = int(os.environ["PORT"])',
      'context = ssl.create_default_context(cafile=os.environ["CA"])',
      'sock = socket.create_connection(("127.0.0.1", port))',
      'with connect(f"wss://api.example.test:{port}/chat", sock=sock, ssl=context, additional_headers={"Authorization": "Bearer " + os.environ["TOKEN"]}) as ws:',
      '    print(ws.recv(timeout=20))',
      '    ws.send("hi")',
      '    print(ws.recv(timeout=20))',
    ].join('\n');
    const ran = await runPython(script, { cwd: tempDir('svc-wss-'), env: { PORT: port, CA: site, TOKEN: token } });
    assert.equal(ran.code, 0, ran.stderr);
    assert.deepEqual(ran.stdout.trim().split('\n'), ['path:/chat root_path:', 'echo:hi']);
  });
});
