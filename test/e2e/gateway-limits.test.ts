import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import type { Deployment } from '../../core/services/deployments/types.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import { tempDir, testCacheDir, testConfig } from '../helpers/config.js';
import { localDriverOf } from '../helpers/local-driver.js';

const fixture = (name: string) => path.join(packageRoot, 'test', 'fixtures', 'apps', name);
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function deployFixture(platform: Platform, file: string, stage: 'deployed' | 'preview' = 'deployed'): Promise<Deployment> {
  const manifest = await loadManifest({ target: fixture(file) });
  return platform.deployments.deploy({
    spec: manifest.spec,
    source: { root: manifest.root, entry: manifest.spec.entry },
    workspace: DEFAULT_WORKSPACE,
    stage,
    principal: null,
  });
}

async function errorOf(response: Response): Promise<{ code: string; message: string; hint?: string }> {
  return ((await response.json()) as { error: { code: string; message: string; hint?: string } }).error;
}

/** Sends raw HTTP and resolves the status line and body once the server answered. */
function raw(url: string, text: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = net.connect(Number(port), hostname, () => socket.write(text));
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString();
      const [head = '', body = ''] = answer.split('\r\n\r\n', 2);
      const length = /content-length: (\d+)/i.exec(head)?.[1];
      if (length !== undefined && Buffer.byteLength(body) >= Number(length)) {
        socket.destroy();
        resolve({ status: Number(head.split(' ')[1]), body });
      }
    });
    socket.on('error', reject);
  });
}

/** Limits and failures at the gateway, with real Python containers behind it. */
describe('gateway limits and failures (real containers)', function () {
  this.timeout(180_000);
  let platform: Platform;
  let deployment: Deployment;
  const reports: unknown[] = [];
  const url = (name: string) => deployment.workloads.find((w) => w.name === name)!.url!;

  before(async () => {
    platform = await startPlatform({ config: testConfig(), report: (error) => reports.push(error) });
    deployment = await deployFixture(platform, 'limits.py');
  });
  after(async () => platform?.close());
  afterEach(() => assert.deepEqual(reports, [], 'nothing here is a bug of svc'));

  it('answers 400 bad_request for a malformed Host header', async () => {
    for (const host of ['a b', '[::1', 'a:99999']) {
      const answer = await raw(url('head'), `GET ${new URL(url('head')).pathname} HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
      assert.equal(answer.status, 400, host);
      assert.equal(JSON.parse(answer.body).error.code, 'bad_request');
    }
  });

  it('does not report a client that leaves before a slow endpoint answers', async () => {
    const client = new AbortController();
    const pending = fetch(`${url('slow')}?seconds=2`, { signal: client.signal }).catch((error: unknown) => error);
    await wait(300);
    client.abort();
    assert.equal(((await pending) as Error).name, 'AbortError');
    await wait(300);
    // afterEach checks that nothing was reported; the endpoint still works.
    const quick = await fetch(`${url('slow')}?seconds=0`);
    assert.deepEqual(await quick.json(), { slept: 0 });
  });

  it("keeps the container's Content-Length on HEAD and sends no body", async () => {
    const get = await fetch(url('head'));
    const body = await get.text();
    const head = await fetch(url('head'), { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(body)));
    assert.equal(await head.text(), '');
  });

  it('answers 413 payload_too_large at once for a declared 300 MB body', async () => {
    const started = Date.now();
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.request(
        url('upload'),
        { method: 'POST', headers: { 'Content-Length': String(300 * 1024 * 1024), 'Content-Type': 'application/json' } },
        (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString()));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
        },
      );
      request.on('error', reject);
      request.flushHeaders(); // headers only: the answer must not wait for the body
    });
    assert.equal(answer.status, 413);
    assert.equal(JSON.parse(answer.body).error.code, 'payload_too_large');
    assert.ok(Date.now() - started < 2000);
  });

  it('answers 413 when a chunked body passes 32 MiB, and the container keeps serving', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 'x');
    async function* body() {
      yield Buffer.from('{"data": "');
      for (let i = 0; i < 40; i++) yield chunk;
      yield Buffer.from('"}');
    }
    const response = await fetch(url('upload'), {
      method: 'POST',
      body: body(),
      duplex: 'half',
      headers: { 'Content-Type': 'application/json' },
    } as RequestInit);
    assert.equal(response.status, 413);
    assert.equal((await errorOf(response)).code, 'payload_too_large');
    const small = await fetch(url('upload'), {
      method: 'POST',
      body: JSON.stringify({ data: 'abc' }),
      headers: { 'Content-Type': 'application/json' },
    });
    assert.deepEqual(await small.json(), { length: 3 });
  });

  it('answers 502 worker_crashed when the worker dies with the request; its supervisor restarts it', async () => {
    const unit = deployment.workloads.find((w) => w.name === 'crash')!.unit!;
    const counts: number[] = [];
    const unwatch = platform.registry.watch((service, instances) => service === unit && counts.push(instances.length));
    try {
      const crashed = await fetch(url('crash'));
      assert.equal(crashed.status, 502);
      assert.equal((await errorOf(crashed)).code, 'worker_crashed');
      // The driver deregisters the dead worker at once, and registers its replacement once it is healthy.
      for (let i = 0; i < 250 && counts.at(-1) !== 1; i++) await wait(20);
      assert.deepEqual(counts, [0, 1]);
      const again = await fetch(url('crash'));
      assert.equal(again.status, 502, 'the restarted worker serves (and crashes) again');
    } finally {
      unwatch();
    }
  });
});

describe('deploy warnings for options this version does not enforce', function () {
  this.timeout(180_000);
  let platform: Platform;
  after(async () => platform?.close());

  it('names each non-default option a served workload sets, and nothing else; cpu and memory only where no cgroup holds them', async () => {
    platform = await startPlatform({ config: testConfig() });
    // A preview: the default workspace is on the free plan, where a deployment with a domain is refused (test/e2e/domains-*.test.ts).
    const deployment = await deployFixture(platform, 'unenforced.py', 'preview');
    const limits = localDriverOf(platform).resourceLimits!;
    assert.deepEqual(deployment.warnings, [
      ...(limits.enforced ? [] : [`cpu and memory are not limited on this machine (${limits.why}): tuned sets cpu=2, memory="1Gi"`]),
      'tuned: domain="api.example.com" is served by the deployment only (svc deploy); a preview answers at its URL',
    ]);
  });

  /** `svc serve` of unenforced.py until it is ready, then Ctrl-C: its output. */
  async function serveOutput(env: NodeJS.ProcessEnv = {}): Promise<{ stdout: string; stderr: string }> {
    const cli = path.join(packageRoot, 'dist', 'cli', 'index.js');
    const child = spawn(process.execPath, [cli, 'serve', fixture('unenforced.py'), '--port', '0', '--data-dir', tempDir('svc-cli-')], {
      env: { ...process.env, SVC_CACHE_DIR: testCacheDir, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('press Ctrl-C to stop')) resolve();
      });
      void exited.then((code) => reject(new Error(`svc serve exited with ${code}:\n${stderr}`)));
    });
    child.kill('SIGINT');
    assert.equal(await exited, 0);
    return { stdout, stderr };
  }

  it('svc serve prints each warning on stderr', async () => {
    const { stdout, stderr } = await serveOutput();
    assert.match(stderr, /^! tuned: domain="api.example.com" is served by the deployment only/m);
    assert.doesNotMatch(stderr, /keep_warm|autoscaler/, 'the autoscaler enforces both');
    // cpu and memory: one line, only where this machine cannot limit them (the test below forces that case).
    const unlimited =
      stderr.match(/^! cpu and memory are not limited on this machine \(.+\): tuned sets cpu=2, memory="1Gi"$/gm)?.length ?? 0;
    assert.equal(stderr.match(/^! /gm)?.length, 1 + unlimited, stderr);
    assert.doesNotMatch(stdout, /not enforced/, 'warnings stay off stdout');
  });

  it('svc serve prints the one line about cpu and memory where no cgroup can be made (SVC_CGROUP_ROOT off any cgroup mount)', async () => {
    const { stderr } = await serveOutput({ SVC_CGROUP_ROOT: tempDir('svc-no-cgroups-') });
    assert.equal(
      stderr.match(
        /^! cpu and memory are not limited on this machine \(no cgroup2 filesystem is mounted under .+\): tuned sets cpu=2, memory="1Gi"$/gm,
      )?.length,
      1,
      stderr,
    );
  });
});
