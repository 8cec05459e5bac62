/**
 * After svc restarts on the same data dir — closed cleanly, or its process
 * killed with SIGKILL — every deployed app answers again at the same URL,
 * a paused app stays paused, and a stopped deployment stays stopped.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { waitNoneMatching } from '../helpers/processes.js';
import { answer, deployRequest, lifecycleManifests } from './lifecycle-helpers.js';
import { freePort } from '../helpers/free-port.js';

const echoApp = path.join(packageRoot, 'test', 'fixtures', 'apps', 'echo.py');
const life = { workspace: DEFAULT_WORKSPACE, app: 'life', stage: 'deployed' as const };

describe('deployments after a restart (real containers)', function () {
  this.timeout(120_000);
  let platform: Platform | undefined;
  afterEach(async () => {
    await platform?.close();
    platform = undefined;
  });

  it('knows every deployed URL from its first answer: while a container starts again, 503 starting with Retry-After, never unknown', async () => {
    const slow = await loadManifest({ target: path.join(packageRoot, 'test', 'fixtures', 'slow-start', 'app.py') });
    const config = testConfig({ port: await freePort() });
    platform = await startPlatform({ config });
    const token = platform.ownerToken.secret;
    const url = (await platform.deployments.deploy(deployRequest(slow))).workloads[0]!.url!;
    assert.equal((await answer(url, token)).status, 200);
    await platform.close();
    platform = undefined;

    // The restart's container takes 3 s to import the app, as a slow image build or model load would.
    process.env.SLOW_START_SECONDS = '3';
    const seen: { status: number; code?: string; retryAfter: string | null }[] = [];
    try {
      const starting = startPlatform({ config });
      starting.then((started) => (platform = started)).catch(() => {});
      for (;;) {
        const response = await fetch(url, { headers: { Authorization: `Bearer ${token}` } }).catch(() => null);
        if (response !== null) {
          const body = (await response.json()) as { error?: { code: string } };
          seen.push({ status: response.status, code: body.error?.code, retryAfter: response.headers.get('retry-after') });
          if (response.status === 200) break;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await starting;
    } finally {
      delete process.env.SLOW_START_SECONDS;
    }
    const refused = seen.filter((s) => s.status !== 200);
    assert.ok(refused.length > 0, 'a request came while the container started');
    assert.deepEqual(
      new Set(refused.map((s) => `${s.status} ${s.code} ${s.retryAfter}`)),
      new Set(['503 starting 5']),
      JSON.stringify(refused.slice(0, 5)),
    );
  });

  it('a bundle file gone while svc was stopped: that workload answers container_failed naming the file and what to do; svc starts and serves the rest', async () => {
    const { v1 } = await lifecycleManifests();
    const echo = await loadManifest({ target: echoApp });
    const config = testConfig({ port: await freePort() });
    platform = await startPlatform({ config });
    const life = (await platform.deployments.deploy(deployRequest(v1))).workloads.find((w) => w.name === 'hello')!;
    const kept = (await platform.deployments.deploy(deployRequest(echo))).workloads.find((w) => w.name === 'public')!;
    const sha = platform.deployments.get({ workspace: DEFAULT_WORKSPACE, app: 'life', stage: 'deployed' })!.workloads[0]!.bundleSha256!;
    await platform.close();
    const file = path.join(config.dataDir, 'bundles', `${sha}.tar.gz`);
    rmSync(file);

    const reports: unknown[] = [];
    platform = await startPlatform({ config, report: (error) => reports.push(error) });
    assert.ok(
      reports.some((error) => String(error).includes(`no bundle ${sha} is stored`)),
      'the server log says which workload and why',
    );
    const refused = await fetch(life.url!, { headers: { Authorization: `Bearer ${platform.ownerToken.secret}` } });
    const body = (await refused.json()) as { error: { code: string; message: string; hint: string } };
    assert.equal(body.error.code, 'container_failed');
    assert.ok(body.error.message.includes(`no bundle ${sha} is stored (${file} is not there)`), body.error.message);
    assert.equal((await fetch(kept.url!)).status, 200, "the other app's bundle is there: it serves");
  });

  it('after a clean close: the same URL answers 200, a paused app stays paused, a stopped deployment stays stopped', async () => {
    const { v1 } = await lifecycleManifests();
    const echo = await loadManifest({ target: echoApp });
    const config = testConfig({ port: await freePort() });
    platform = await startPlatform({ config });
    const deployed = await platform.deployments.deploy(deployRequest(v1));
    await platform.deployments.stopWorkload(life, 'other');
    const paused = await platform.deployments.deploy(deployRequest(echo));
    await platform.deployments.pause(paused.ref);
    const logsBefore = platform.deploymentLogs.lines({ ...life, workload: 'hello' });
    assert.ok(logsBefore.length > 0, 'the container printed something');
    await platform.close();

    platform = await startPlatform({ config });
    // The logs API reads the lines kept before the restart, ahead of the new container's.
    assert.deepEqual(platform.deploymentLogs.lines({ ...life, workload: 'hello' }).slice(0, logsBefore.length), logsBefore);
    const hello = deployed.workloads.find((w) => w.name === 'hello')!.url!;
    assert.deepEqual(await answer(hello), { status: 200, version: 1, code: undefined });
    assert.equal((await answer(deployed.workloads.find((w) => w.name === 'other')!.url!)).code, 'deployment_stopped');
    const publicUrl = paused.workloads.find((w) => w.name === 'public')!.url!;
    assert.equal((await answer(publicUrl)).code, 'app_paused');
    const restored = platform.deployments.get(life)!;
    assert.deepEqual(
      restored.workloads.map((w) => [w.name, w.status, w.version]),
      [
        ['hello', 'running', 1],
        ['other', 'stopped', 1],
      ],
    );
    // And the restored app moves on from where it was: resume brings the paused one back, a deploy makes version 2.
    await platform.deployments.resume(paused.ref);
    assert.equal((await answer(publicUrl)).status, 200);
    const redeployed = await platform.deployments.deploy(deployRequest(v1, { workload: 'hello' }));
    assert.equal(redeployed.workloads.find((w) => w.name === 'hello')?.version, 2);
  });

  it('after SIGKILL of the svc process: the same URL answers 200 and a paused app stays paused', async () => {
    const dataDir = tempDir('svc-data-');
    const port = await freePort();
    const script = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'helpers', 'lifecycle-child.js');
    const lifeApp = path.join(packageRoot, 'test', 'fixtures', 'lifecycle', 'v1', 'app.py');
    const child = spawn(process.execPath, [script, dataDir, String(port), lifeApp, `${echoApp}:pause`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let socketDir = '';
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('\n')) resolve(out.split('\n')[0]!);
        });
        child.on('exit', (code) => reject(new Error(`the svc process exited with ${code}:\n${stderr}`)));
      });
      const started = JSON.parse(line) as { url: string; socketDir: string };
      socketDir = started.socketDir;
      const hello = `${started.url}/default/life/hello`;
      assert.equal((await answer(hello)).status, 200);
      child.kill('SIGKILL');
      assert.deepEqual(await waitNoneMatching(socketDir, 10_000), [], 'its containers ended with it');

      platform = await startPlatform({ config: testConfig({ dataDir, port }) });
      assert.equal(platform.url, started.url);
      assert.deepEqual(await answer(hello), { status: 200, version: 1, code: undefined });
      assert.equal((await answer(`${started.url}/default/echo/public/public`)).code, 'app_paused');
    } finally {
      child.kill('SIGKILL');
      if (socketDir) rmSync(socketDir, { recursive: true, force: true });
    }
  });
});
