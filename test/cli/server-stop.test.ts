/**
 * `svc server` stops cleanly whatever it is doing when SIGTERM arrives:
 * serving (requests in flight finish, new ones get 503 shutting_down) or
 * still restoring the deployed apps after a restart (the restore is cut
 * short). Each time it exits 0, leaves no container and releases the data dir.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import { socketBase } from '../../core/infra/scheduler/local/socket-dir.js';
import { tempDir, testCacheDir } from '../helpers/config.js';
import { waitNoneMatching } from '../helpers/processes.js';
import { until } from '../helpers/until.js';
import { deployHalt, gate, SHUTDOWN_WAIT_MS } from '../core/services/deployments/shutdown-helpers.js';

const cli = path.join(packageRoot, 'dist', 'cli', 'index.js');

interface Server {
  readonly child: ChildProcess;
  readonly output: { stdout: string; stderr: string };
  readonly exited: Promise<number | null>;
}

/** Spawns `svc server` on the data dir; `extraEnv` reaches its containers too. */
function spawnServer(dataDir: string, extraEnv: Record<string, string> = {}): Server {
  const env: NodeJS.ProcessEnv = { ...process.env, SVC_CACHE_DIR: testCacheDir, NO_COLOR: '1', ...extraEnv };
  if (!('SVC_TEST_START_SLEEP' in extraEnv)) delete env.SVC_TEST_START_SLEEP;
  const child = spawn(process.execPath, [cli, 'server', '--port', '0', '--data-dir', dataDir], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = { stdout: '', stderr: '' };
  child.stdout!.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output, exited };
}

/** Waits until the server printed its whole "listening" block; its URL. */
async function listening(server: Server): Promise<string> {
  let gone = false;
  void server.exited.then(() => (gone = true));
  await until(
    'svc server to listen or exit',
    () => gone || (/listening on http:\/\/\S+/.test(server.output.stdout) && server.output.stdout.endsWith('\n\n')),
    SHUTDOWN_WAIT_MS,
  );
  const url = /listening on (http:\/\/\S+)/.exec(server.output.stdout)?.[1];
  assert.ok(url, `svc server did not start:\n${server.output.stderr}`);
  return url;
}

/** Stops the server with SIGTERM; its exit code. */
async function terminate(server: Server): Promise<number | null> {
  server.child.kill('SIGTERM');
  return server.exited;
}

const containersOf = (server: Server) => `${socketBase()}/${server.child.pid}-`;

describe('svc server stopped by SIGTERM', function () {
  this.timeout(120_000);
  const running: Server[] = [];
  afterEach(() => {
    for (const server of running.splice(0)) server.child.kill('SIGKILL');
  });

  function start(dataDir: string, extraEnv?: Record<string, string>): Server {
    const server = spawnServer(dataDir, extraEnv);
    running.push(server);
    return server;
  }

  it('answers 503 shutting_down while it drains, lets the request in flight finish, and exits 0', async () => {
    const dataDir = tempDir('svc-server-');
    const server = start(dataDir);
    const url = await listening(server);
    const owner = readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
    const deployed = await deployHalt(url, owner);
    assert.equal(deployed.status, 201, deployed.text);
    const hold: string = deployed.json.deployments[0].urls.path;
    const held = gate();
    try {
      const inFlight = fetch(`${hold}?gate=${encodeURIComponent(held.path)}`);
      await held.entered();
      server.child.kill('SIGTERM');
      await until('svc server to say it is stopping', () => server.output.stderr.includes('stopping:'), SHUTDOWN_WAIT_MS);
      const during = await fetch(`${hold}?gate=${encodeURIComponent(held.path)}`);
      assert.equal(during.status, 503);
      assert.equal(((await during.json()) as { error: { code: string } }).error.code, 'shutting_down');
      assert.equal(during.headers.get('retry-after'), '5');
      held.open();
      const answered = await inFlight;
      assert.equal(answered.status, 200);
      assert.deepEqual(await answered.json(), { released: true });
    } finally {
      held.open();
    }
    assert.equal(await server.exited, 0, server.output.stderr);
    assert.match(server.output.stderr, /stopped/);
    assert.deepEqual(await waitNoneMatching(containersOf(server), 5_000), [], 'no container of the server');
  });

  it('exits 0 when stopped while it restores the deployed apps, leaving no container and the data dir free', async () => {
    const dataDir = tempDir('svc-server-');
    const first = start(dataDir);
    const firstUrl = await listening(first);
    const owner = readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
    const deployed = await deployHalt(firstUrl, owner);
    assert.equal(deployed.status, 201, deployed.text);
    const holdPath = new URL(deployed.json.deployments[0].urls.path as string).pathname;
    assert.equal(await terminate(first), 0, first.output.stderr);

    // Restarted: the app's container sleeps in on_start, so the restore is still running when SIGTERM comes.
    const restarting = start(dataDir, { SVC_TEST_START_SLEEP: '60' });
    let gone = false;
    void restarting.exited.then(() => (gone = true));
    await until(
      'the restore to start a container, or svc server to exit',
      () => gone || /starting container/.test(restarting.output.stderr),
      SHUTDOWN_WAIT_MS,
    );
    assert.ok(!gone, `svc server exited before its restore started a container:\n${restarting.output.stderr}`);
    assert.doesNotMatch(restarting.output.stdout, /listening on/, 'still restoring');
    assert.equal(await terminate(restarting), 0, restarting.output.stderr);
    assert.match(restarting.output.stderr, /stopped/);
    assert.deepEqual(await waitNoneMatching(containersOf(restarting), 5_000), [], 'no container of the stopped server');

    // The lock is released (else: state_locked), and the app, untouched by the cut restore, is served again.
    const again = start(dataDir);
    const url = await listening(again);
    const held = gate();
    held.open();
    const restored = await fetch(`${url}${holdPath}?gate=${encodeURIComponent(held.path)}`);
    assert.equal(restored.status, 200);
    assert.equal(await terminate(again), 0, again.output.stderr);
  });
});
