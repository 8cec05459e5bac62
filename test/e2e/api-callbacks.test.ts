/**
 * Completion callbacks of spawned calls over real HTTP, against real containers
 * (test/fixtures/calls) and a real receiver started here: a signed POST when a call succeeds,
 * fails or is cancelled, verified with the workspace's secret by the recipes docs/api.md gives
 * (the Python one run as written there); attempts again with back-off (shortened here), all on
 * the call; delivered after a restart of svc; the secret read and rotated by owners only and
 * sealed in the store; a function's own `callback_url=` for calls that name none; and the URLs
 * refused against server-side request forgery, the function's own when a call is made.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadManifest, type LoadedManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import type { ServerConfig } from '../../config/schema.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { tokenFor } from '../core/http/api/platform.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { upload } from './api-lifecycle-helpers.js';
import { callRequests, uploadCallsFixture } from './call-helpers.js';
import { bundleOfFolder, pickledCall, unpickled } from './run-helpers.js';

/** docs/api.md's TypeScript recipe, as written there. */
function verifySvcCallback(secret: string, timestamp: string, signature: string, body: string): boolean {
  if (!(Math.abs(Date.now() / 1000 - Number(timestamp)) <= 300)) return false; // too old (or from the future): a replay
  const expected = Buffer.from(`v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`);
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** docs/api.md's Python recipe, run as written there on what the receiver got. */
function verifiedByPythonRecipe(secret: string, received: Received): boolean {
  const docs = readFileSync(path.join(packageRoot, 'docs', 'api.md'), 'utf8');
  const recipe = /```python\n(import hashlib, hmac, time\n[\s\S]*?def verify_svc_callback[\s\S]*?)```/.exec(docs)?.[1];
  assert.ok(recipe !== undefined, 'docs/api.md has the Python recipe');
  const check = `${recipe}\nimport json, sys\nargs = json.load(sys.stdin)\nprint(verify_svc_callback(args["secret"], args["headers"], args["body"].encode()))\n`;
  const headers = { 'X-Svc-Timestamp': received.headers['x-svc-timestamp'], 'X-Svc-Signature': received.headers['x-svc-signature'] };
  const input = JSON.stringify({ secret, headers, body: received.body });
  return execFileSync(process.env.SVC_PYTHON ?? 'python3', ['-c', check], { input, encoding: 'utf8' }).trim() === 'True';
}

interface Received {
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** A receiver of callbacks: it answers each path with the statuses queued for it (then 200), and keeps what it got. */
async function startReceiver() {
  const received: Received[] = [];
  const answers = new Map<string, number[]>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ path: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.statusCode = answers.get(req.url!)?.shift() ?? 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (path: string, statuses: number[] = []) => {
      answers.set(path, statuses);
      return `${base}${path}`;
    },
    received,
    /** What `path` got, once it got `count` requests. */
    async at(path: string, count = 1): Promise<Received[]> {
      for (;;) {
        const got = received.filter((r) => r.path === path);
        if (got.length >= count) return got;
        await sleep(20);
      }
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe('API: completion callbacks of spawned calls', function () {
  this.timeout(180_000);
  let config: ServerConfig;
  let platform: Platform;
  let call: Call;
  let owner: string;
  let manifest: LoadedManifest;
  let sha256: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const reports: unknown[] = [];

  const start = async () => {
    platform = await startPlatform({
      config,
      report: (error) => reports.push(error),
      callbackBackoff: { firstMs: 20, maxMs: 200 },
    });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
  };
  const requests = callRequests(() => ({ call, owner, manifest, sha256 }));
  const spawn = (fn: string, args: unknown[], callbackUrl: string) => requests.spawn(fn, args, { callbackUrl });
  const { statusOf } = requests;
  /** The call's view once its callback is delivered. */
  const delivered = (id: string) => requests.until(id, (view) => view.callback?.delivered === true);
  const secret = async () => (await call('GET', '/api/v1/workspace/callback-secret', { token: owner })).json.secret as string;

  before(async () => {
    // The receiver listens on loopback: this server allows private addresses.
    config = testConfig({ callbackAllowPrivate: true });
    await start();
    receiver = await startReceiver();
    ({ manifest, sha256 } = await uploadCallsFixture(platform.url, owner));
  });
  after(async () => {
    await platform?.close();
    await receiver?.close();
  });
  afterEach(() => assert.deepEqual(reports, [], 'no unexpected errors'));

  it('POSTs a signed callback when a call succeeds and when it fails, which verifies with the workspace secret', async () => {
    const ok = (await spawn('square', [7], receiver.url('/ok'))).json.call;
    assert.deepEqual(ok.callback, { url: receiver.url('/ok'), attempts: [], delivered: false });
    const failing = await spawn('fail', ['no database'], receiver.url('/failed'));
    assert.equal(failing.status, 202, failing.text);
    const [succeeded] = await receiver.at('/ok');
    const [failed] = await receiver.at('/failed');
    const key = await secret();
    assert.match(key, /^svcwh_/);
    for (const got of [succeeded!, failed!]) {
      assert.equal(got.headers['content-type'], 'application/json');
      assert.ok(verifySvcCallback(key, got.headers['x-svc-timestamp'] as string, got.headers['x-svc-signature'] as string, got.body));
      assert.ok(verifiedByPythonRecipe(key, got), 'the Python recipe verifies it too');
      // Any change of the body or the timestamp breaks the signature.
      const timestamp = String(Number(got.headers['x-svc-timestamp']) - 1);
      assert.ok(!verifySvcCallback(key, timestamp, got.headers['x-svc-signature'] as string, got.body));
      assert.ok(
        !verifySvcCallback(key, got.headers['x-svc-timestamp'] as string, got.headers['x-svc-signature'] as string, `${got.body} `),
      );
    }
    const okBody = JSON.parse(succeeded!.body);
    assert.deepEqual([succeeded!.headers['x-svc-call-id'], succeeded!.headers['x-svc-call-status']], [ok.id, 'succeeded']);
    assert.deepEqual([okBody.call.id, okBody.call.status, okBody.frame.type], [ok.id, 'succeeded', 'result']);
    assert.equal(unpickled(okBody.frame.pickle), 49);
    const failedBody = JSON.parse(failed!.body);
    assert.equal(failed!.headers['x-svc-call-status'], 'failed');
    assert.deepEqual(failedBody.call.error, { code: null, message: 'ValueError: no database' });
    assert.match(failedBody.frame.traceback, /raise ValueError\(message\)/);

    const view = await delivered(ok.id);
    assert.equal(view.callback.attempts.length, 1);
    assert.equal(view.callback.attempts[0].status, 200);
  });

  it('tries again with back-off on non-2xx answers, every attempt on the call', async () => {
    const id = (await spawn('square', [3], receiver.url('/flaky', [500, 500]))).json.call.id;
    const view = await delivered(id);
    assert.deepEqual(
      view.callback.attempts.map((a: { status: number }) => a.status),
      [500, 500, 200],
    );
    const times = view.callback.attempts.map((a: { at: string }) => Date.parse(a.at));
    assert.ok(times[1] > times[0] && times[2] > times[1], 'attempts one after the other');
    assert.equal((await receiver.at('/flaky', 3)).length, 3);
  });

  it('calls back a cancelled call, and a JSON call whose URL came as X-Svc-Callback-Url', async () => {
    const gate = path.join(tempDir('svc-gate-'), 'open');
    const id = (await spawn('gated-once', [gate], receiver.url('/cancelled'))).json.call.id;
    for (let c = await statusOf(id); c.status !== 'running'; c = await statusOf(id)) await sleep(50);
    assert.equal((await call('DELETE', `/api/v1/calls/${id}`, { token: owner })).status, 204);
    const [cancelled] = await receiver.at('/cancelled');
    assert.equal(cancelled!.headers['x-svc-call-status'], 'cancelled');
    assert.deepEqual([JSON.parse(cancelled!.body).call.status, JSON.parse(cancelled!.body).frame], ['cancelled', null]);

    const deployed = await call('POST', '/api/v1/apps/calls/deployments', {
      token: owner,
      json: { manifest: manifest.raw, bundle: sha256 },
    });
    assert.ok([200, 201].includes(deployed.status), deployed.text);
    const spawned = await call('POST', '/api/v1/apps/calls/functions/shift/calls', {
      token: owner,
      json: { p: { x: 1, y: 2 }, by: 10 },
      headers: { 'X-Svc-Callback-Url': receiver.url('/json') },
    });
    assert.equal(spawned.status, 202, spawned.text);
    const [json] = await receiver.at('/json');
    const body = JSON.parse(json!.body);
    assert.deepEqual([body.call.id, body.call.result, body.frame.json], [spawned.json.call_id, { x: 11, y: 12 }, { x: 11, y: 12 }]);
  });

  it("sends a call that names no URL to its workload's callback_url=, and a URL given with the call wins", async () => {
    const project = tempDir('svc-callback-option-');
    const [hooks, deferredHooks] = [receiver.url('/option'), receiver.url('/deferred')];
    writeFileSync(
      path.join(project, 'app.py'),
      [
        'import svc',
        'app = svc.App("hooked")',
        `@app.function(callback_url=${JSON.stringify(hooks)})`,
        'def cube(x: int) -> int:',
        '    return x ** 3',
        `@app.endpoint(methods=["POST"], callback_url=${JSON.stringify(deferredHooks)})`,
        'def half(x: int) -> float:',
        '    return x / 2',
        '',
      ].join('\n'),
    );
    const loaded = await loadManifest({ target: path.join(project, 'app.py') });
    const bundle = await bundleOfFolder(project);
    assert.equal((await upload(platform.url, owner, bundle.bytes, bundle.sha256)).status, 201);
    const deployed = await call('POST', '/api/v1/apps/hooked/deployments', {
      token: owner,
      json: { manifest: loaded.raw, bundle: bundle.sha256 },
    });
    assert.ok([200, 201].includes(deployed.status), deployed.text);

    // Spawned as svc.Function.from_name("hooked", "cube").spawn(3) does: no URL of its own.
    const spawned = await call('POST', '/api/v1/calls', {
      token: owner,
      json: { app: 'hooked', function: 'cube', input: pickledCall([3]).toString('base64') },
    });
    assert.equal(spawned.status, 202, spawned.text);
    assert.equal(spawned.json.call.callback.url, hooks);
    const [got] = await receiver.at('/option');
    const [timestamp, signature] = [got!.headers['x-svc-timestamp'] as string, got!.headers['x-svc-signature'] as string];
    assert.ok(verifySvcCallback(await secret(), timestamp, signature, got!.body), 'its signature verifies');
    assert.deepEqual([got!.headers['x-svc-call-id'], got!.headers['x-svc-call-status']], [spawned.json.call.id, 'succeeded']);
    assert.equal(unpickled(JSON.parse(got!.body).frame.pickle), 27);

    const given = await call('POST', '/api/v1/apps/hooked/functions/cube/calls', {
      token: owner,
      json: { x: 2 },
      headers: { 'X-Svc-Callback-Url': receiver.url('/given') },
    });
    assert.equal(given.status, 202, given.text);
    assert.equal(given.json.call.callback.url, receiver.url('/given'));
    const [answered] = await receiver.at('/given');
    assert.equal(JSON.parse(answered!.body).call.result, 8);

    // An endpoint's request kept with Prefer: respond-async goes to the endpoint's callback_url=.
    const half = deployed.json.deployments.find((d: { workload: string }) => d.workload === 'half');
    const accepted = await fetch(half.urls.path, {
      method: 'POST',
      headers: { prefer: 'respond-async', authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
      body: JSON.stringify({ x: 5 }),
    });
    assert.equal(accepted.status, 202, await accepted.clone().text());
    const { call_id: deferredId } = (await accepted.json()) as { call_id: string };
    const [deferred] = await receiver.at('/deferred');
    assert.deepEqual([deferred!.headers['x-svc-call-id'], deferred!.headers['x-svc-call-status']], [deferredId, 'succeeded']);
    const { response } = JSON.parse(deferred!.body).frame;
    assert.deepEqual([response.status, JSON.parse(Buffer.from(response.body, 'base64').toString('utf8'))], [200, 2.5]);
  });

  it('delivers after a restart of svc what was not delivered before it', async () => {
    const id = (await spawn('square', [4], receiver.url('/later', Array(1000).fill(503)))).json.call.id;
    await receiver.at('/later', 2);
    await platform.close();
    receiver.url('/later', []); // the receiver takes it from now on
    const seen = (await receiver.at('/later')).length;
    await start();
    const view = await delivered(id);
    const statuses = view.callback.attempts.map((a: { status: number }) => a.status);
    assert.equal(statuses.at(-1), 200);
    assert.ok(statuses.slice(0, -1).every((status: number) => status === 503) && statuses.length >= 2, JSON.stringify(statuses));
    assert.ok((await receiver.at('/later')).length > seen);
  });

  it('shows and rotates the signing secret to owners only, and never stores it in plaintext', async () => {
    const first = await secret();
    assert.equal(await secret(), first, 'made once, then the same');
    const stored = (await platform.controlPlane.store.get('callback-secrets/default'))!.value.toString('utf8');
    assert.ok(!stored.includes(first.slice('svcwh_'.length)), 'sealed in the store');
    const member = (await tokenFor(platform, 'default')).secret;
    for (const [method, url] of [
      ['GET', '/api/v1/workspace/callback-secret'],
      ['POST', '/api/v1/workspace/callback-secret/rotate'],
    ] as const) {
      const refused = await call(method, url, { token: member, ...(method === 'POST' ? { json: {} } : {}) });
      assert.deepEqual([refused.status, refused.json.error.code], [403, 'forbidden']);
      assert.match(refused.json.error.message, /only an owner/);
    }
    const rotated = await call('POST', '/api/v1/workspace/callback-secret/rotate', { token: owner, json: {} });
    assert.equal(rotated.status, 200, rotated.text);
    assert.notEqual(rotated.json.secret, first);
    assert.equal(await secret(), rotated.json.secret);
    const id = (await spawn('square', [5], receiver.url('/rotated'))).json.call.id;
    const [got] = await receiver.at('/rotated');
    const [timestamp, signature] = [got!.headers['x-svc-timestamp'] as string, got!.headers['x-svc-signature'] as string];
    assert.ok(verifySvcCallback(rotated.json.secret, timestamp, signature, got!.body));
    assert.ok(!verifySvcCallback(first, timestamp, signature, got!.body));
    await delivered(id);
  });
});

describe('API: callback URLs refused (server-side request forgery)', function () {
  this.timeout(60_000);
  let platform: Platform;
  let call: Call;
  let owner: string;
  const reports: unknown[] = [];

  before(async () => {
    platform = await startPlatform({ config: testConfig(), report: (error) => reports.push(error) });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
  });
  after(async () => platform?.close());
  afterEach(() => assert.deepEqual(reports, [], 'no unexpected errors'));

  const spawn = (callbackUrl: unknown) =>
    call('POST', '/api/v1/calls', {
      token: owner,
      json: { app: 'calls', function: 'square', input: pickledCall([1]).toString('base64'), callbackUrl },
    });

  it('refuses URLs that are not absolute http(s) URLs, and addresses inside the network, saying why', async () => {
    const cases: [unknown, RegExp][] = [
      ['ftp://example.com/hooks', /scheme is ftp:; svc POSTs callbacks over http: or https: only/],
      ['http://', /is not an absolute URL/],
      ['/hooks/svc', /is not an absolute URL/],
      [`https://example.com/${'x'.repeat(2048)}`, /characters long; at most 2048/],
      [42, /must be a string/],
      ['http://127.0.0.1:9/hooks', /127\.0\.0\.1 \(loopback\).*server-side request forgery/],
      ['http://localhost/hooks', /resolves to (127\.0\.0\.1|::1) \(loopback\)/],
      ['http://10.1.2.3/hooks', /10\.1\.2\.3 \(private\)/],
      ['http://192.168.0.7/hooks', /192\.168\.0\.7 \(private\)/],
      ['http://169.254.169.254/latest/meta-data', /169\.254\.169\.254 \(link-local\)/],
      ['http://[fd00::1]/hooks', /fd00::1 \(unique-local\)/],
      ['http://[::ffff:127.0.0.1]/hooks', /\(loopback\)/],
      ['http://0.0.0.0:8080/', /0\.0\.0\.0 \(unspecified\)/],
    ];
    for (const [url, message] of cases) {
      const refused = await spawn(url);
      assert.equal(refused.status, 400, `${String(url).slice(0, 60)}: ${refused.text}`);
      assert.equal(refused.json.error.code, 'bad_request');
      assert.match(refused.json.error.message, message, String(url).slice(0, 60));
      assert.match(refused.json.error.message, /the field "callbackUrl"/);
    }
    const header = await call('POST', '/api/v1/apps/calls/functions/square/calls', {
      token: owner,
      json: { x: 1 },
      headers: { 'X-Svc-Callback-Url': 'http://127.0.0.1:9/hooks' },
    });
    assert.deepEqual([header.status, header.json.error.code], [400, 'bad_request']);
    assert.match(header.json.error.message, /the header X-Svc-Callback-Url is refused.*loopback.*server-side request forgery/);
    assert.match(header.json.error.hint, /callbackAllowPrivate/);
    // A public address passes the check: the spawn goes on (to the app, which is not deployed here).
    const allowed = await spawn('http://93.184.215.14/hooks');
    assert.deepEqual([allowed.status, allowed.json.error.code], [404, 'not_found']);
  });

  it("refuses a call whose function's callback_url= points inside the network, when the call is made, keeping nothing", async () => {
    const { manifest, sha256 } = await uploadCallsFixture(platform.url, owner);
    const raw = structuredClone(manifest.raw);
    const square = raw.workloads.find((workload) => workload.name === 'square')!;
    (square.options as { callback_url?: string }).callback_url = 'http://127.0.0.1:9/hooks';
    const refused = await call('POST', '/api/v1/calls', {
      token: owner,
      json: { manifest: raw, bundle: sha256, function: 'square', input: pickledCall([1]).toString('base64') },
    });
    assert.deepEqual([refused.status, refused.json.error.code], [400, 'bad_request'], refused.text);
    assert.match(
      refused.json.error.message,
      /^the callback_url option of function square is refused: its host 127\.0\.0\.1 resolves to 127\.0\.0\.1 \(loopback\)\..*server-side request forgery/,
    );
    assert.match(refused.json.error.hint, /callbackAllowPrivate/);
    // Nothing kept: the app, never deployed here, is known by no call either.
    const listed = await call('GET', '/api/v1/apps/calls/calls', { token: owner });
    assert.deepEqual([listed.status, listed.json.error.code], [404, 'not_found'], listed.text);
  });
});
