import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import type { LookupFunction } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import WebSocket from 'ws';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { tokenFor } from '../core/http/api/platform.js';
import { testConfig } from '../helpers/config.js';
import { requireDnsmasq, startDnsmasq, type Dnsmasq } from '../helpers/dnsmasq.js';

const run = promisify(execFile);
const fixture = (name: string) => path.join(packageRoot, 'test', 'fixtures', 'apps', name);
/** Every name is this machine, as `curl --resolve` makes it. */
const loopback: LookupFunction = (_host, options, callback) => {
  if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

/** Custom domains end to end: a real platform, real containers, dnsmasq on loopback, curl and ws as clients. */
describe('custom domains (real containers, dnsmasq, curl, ws)', function () {
  this.timeout(240_000);
  let dns: Dnsmasq | undefined;
  let platform: Platform;
  let call: Call;
  let port: string;
  let acme: string;
  let beta: string;

  /** `curl --resolve <host>:<port>:127.0.0.1 http://<host>:<port><path>`: status and body. */
  async function curl(host: string, urlPath: string, token?: string, extra: string[] = []): Promise<{ status: number; body: string }> {
    const args = ['-sS', '-N', '--max-time', '20', '--resolve', `${host}:${port}:127.0.0.1`, '-o', '-', '-w', '\n%{http_code}', ...extra];
    if (token !== undefined) args.push('-H', `Authorization: Bearer ${token}`);
    const { stdout } = await run('curl', [...args, `http://${host}:${port}${urlPath}`]);
    const cut = stdout.lastIndexOf('\n');
    return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) };
  }

  async function deploy(file: string, workspace: string) {
    const manifest = await loadManifest({ target: fixture(file) });
    return platform.deployments.deploy({
      spec: manifest.spec,
      source: { root: manifest.root, entry: manifest.spec.entry },
      workspace,
      stage: 'deployed',
      principal: null,
    });
  }

  const setPlan = async (workspace: string, plan: string) => {
    const answer = await call('PUT', `/api/v1/workspaces/${workspace}/plan`, { token: platform.ownerToken.secret, json: { plan } });
    assert.equal(answer.status, 200, answer.text);
  };

  before(async function () {
    requireDnsmasq(this);
    dns = await startDnsmasq();
    platform = await startPlatform({ config: testConfig({ dnsResolver: dns.address }) });
    call = apiClient(platform.url);
    port = new URL(platform.url).port;
    acme = (await tokenFor(platform, 'acme', 'acc_000000000000ac11')).secret;
    beta = (await tokenFor(platform, 'beta', 'acc_000000000000be7a')).secret;
  });
  after(async () => {
    await platform?.close();
    await dns?.stop();
  });

  it('refuses a deploy with a domain on the free plan, naming the domain and the plans, and changes nothing', async () => {
    await assert.rejects(deploy('domains.py', 'acme'), (error: Error & { code: string }) => {
      assert.equal(error.code, 'plan_forbids_domain');
      assert.match(
        error.message,
        /web sets domain="api\.example\.test", but the workspace "acme" is on the free plan; custom domains need the team or business plan/,
      );
      return true;
    });
    assert.deepEqual(
      platform.deployments.list().filter((d) => d.ref.workspace === 'acme'),
      [],
    );
    assert.deepEqual((await call('GET', '/api/v1/domains', { token: acme })).json, { domains: [] });
  });

  it('deploys on team: the domain is pending, shows its TXT record, and answers 404 until verified', async () => {
    await setPlan('acme', 'team');
    await setPlan('beta', 'business');
    await deploy('domains.py', 'acme');
    await deploy('domains_other.py', 'beta');
    const { domains } = (await call('GET', '/api/v1/domains', { token: acme })).json;
    assert.equal(domains.length, 1);
    assert.deepEqual(
      [domains[0].domain, domains[0].status, domains[0].record.name],
      ['api.example.test', 'pending', '_svc-challenge.api.example.test'],
    );
    const answer = await curl('api.example.test', '/hello', acme);
    assert.equal(answer.status, 404, answer.body);
    assert.equal(JSON.parse(answer.body).error.code, 'not_found');
  });

  it('verifies the domain through the DNS server once the TXT record is published', async () => {
    const [pending] = (await call('GET', '/api/v1/domains', { token: acme })).json.domains;
    const early = await call('POST', '/api/v1/domains/api.example.test/verify', { token: acme, json: {} });
    assert.equal(early.json.status, 'pending');
    await dns!.publish({ '_svc-challenge.api.example.test': pending.record.value });
    const verified = await call('POST', '/api/v1/domains/api.example.test/verify', { token: acme, json: {} });
    assert.equal(verified.status, 200, verified.text);
    assert.equal(verified.json.status, 'verified');
  });

  it('serves the workload at the root of the host over HTTP (empty root_path), with its auth rules', async () => {
    const answer = await curl('api.example.test', '/hello?x=1', acme);
    assert.equal(answer.status, 200, answer.body);
    assert.deepEqual(JSON.parse(answer.body), { app: 'shop', path: '/hello', root_path: '' });
    assert.equal((await curl('API.Example.Test', '/', acme)).status, 200);
    assert.equal((await curl('api.example.test', '/hello')).status, 401);
    // Another workspace's token: the same 404 as an unknown URL.
    assert.equal((await curl('api.example.test', '/hello', beta)).status, 404);
  });

  it('streams Server-Sent Events from the domain', async () => {
    const answer = await curl('api.example.test', '/events', acme);
    assert.equal(answer.status, 200);
    assert.equal(answer.body, 'data: tick 0\n\ndata: tick 1\n\ndata: tick 2\n\n');
  });

  it('bridges WebSockets on the domain, at the root, and refuses them without a token', async () => {
    const socket = new WebSocket(`ws://api.example.test:${port}/chat`, { lookup: loopback, headers: { Authorization: `Bearer ${acme}` } });
    const messages: string[] = [];
    await new Promise<void>((resolve, reject) => {
      socket.on('message', (data) => {
        messages.push(data.toString());
        if (messages.length === 1) socket.send('hi');
        else socket.close();
      });
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
    assert.deepEqual(messages, ['path:/chat root_path:', 'echo:hi']);
    const refused = await new Promise<number>((resolve) => {
      const anonymous = new WebSocket(`ws://api.example.test:${port}/chat`, { lookup: loopback });
      anonymous.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      anonymous.on('error', () => {});
    });
    assert.equal(refused, 401);
  });

  it("never lets a Host reach another workload: an unverified domain, another app's path under a domain, a pending public workload", async () => {
    // beta's domain is pending: 404 even though its workload is public, whatever the path.
    for (const urlPath of ['/secret', '/beta/blog/secret/secret', '/acme/shop/web/hello']) {
      const answer = await curl('blog.example.test', urlPath, beta);
      assert.equal(answer.status, 404, `${urlPath}: ${answer.body}`);
    }
    // Another app's path under acme's domain goes to acme's app, which sees it as its own path.
    const spoof = await curl('api.example.test', '/beta/blog/secret/secret', acme);
    assert.deepEqual(JSON.parse(spoof.body), { app: 'shop', path: '/beta/blog/secret/secret', root_path: '' });
    // With beta's token on acme's domain: nothing answers.
    assert.equal((await curl('api.example.test', '/beta/blog/secret/secret', beta)).status, 404);
    // A WebSocket to the pending domain is refused before the handshake.
    const status = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`ws://blog.example.test:${port}/acme/shop/web/chat`, {
        lookup: loopback,
        headers: { Authorization: `Bearer ${acme}` },
      });
      socket.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      socket.on('error', () => {});
    });
    assert.equal(status, 404);
  });

  it('stops serving on a downgrade with a visible status, and serves again on an upgrade; only the operator changes plans', async () => {
    const refused = await call('PUT', '/api/v1/workspaces/acme/plan', { token: acme, json: { plan: 'business' } });
    assert.equal(refused.json.error.code, 'not_operator');
    await setPlan('acme', 'free');
    assert.equal((await curl('api.example.test', '/hello', acme)).status, 404);
    const listed = await run(process.execPath, [path.join(packageRoot, 'dist', 'cli', 'index.js'), 'domain', 'list', '--json'], {
      env: { ...process.env, SVC_SERVER: platform.url, SVC_TOKEN: acme },
    });
    assert.equal(JSON.parse(listed.stdout).domains[0].status, 'suspended');
    await setPlan('acme', 'team');
    assert.equal((await curl('api.example.test', '/hello', acme)).status, 200);
    const record = (await call('GET', '/api/v1/workspace/plan', { token: acme })).json;
    assert.deepEqual(
      record.changes.map((c: { from: string; to: string; by: string }) => `${c.from}->${c.to} by ${c.by}`),
      [
        `free->team by ${platform.controlPlane.owner.account.id}`,
        `team->free by ${platform.controlPlane.owner.account.id}`,
        `free->team by ${platform.controlPlane.owner.account.id}`,
      ],
    );
  });
});
