import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot, sdkPythonPath } from '../../core/model/paths.js';
import { quickstartApp, tempDir, testCacheDir } from '../helpers/config.js';

const cli = path.join(packageRoot, 'dist', 'cli', 'index.js');
const runsApp = path.join(packageRoot, 'test', 'fixtures', 'runs', 'ok', 'app.py');
const lifecycle = path.join(packageRoot, 'test', 'fixtures', 'lifecycle');

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Every command `--help` must show with an example. */
/**
 * The svc CLI as people run it: `node dist/cli/index.js …` child processes
 * against a real `svc server` child process. Signs in by the device flow
 * (approved through the API, as the dashboard will), deploys the quickstart,
 * calls it with the saved token, and takes it through pause, resume, stop and
 * delete; checks exit codes, what goes to stdout and what to stderr, and that
 * --json parses. The tests run in order.
 */
describe('svc CLI against svc server (command line)', function () {
  this.timeout(180_000);
  let server: ChildProcess;
  let url: string;
  let dataDir: string;
  let owner: string;
  let env: NodeJS.ProcessEnv;
  let greetUrl: string;
  let token: string;

  /** Runs the CLI to its end (stdin is not a terminal). */
  const svc = (...args: string[]): Promise<Ran> =>
    new Promise((resolve) => {
      execFile(process.execPath, [cli, ...args], { env, cwd: packageRoot }, (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr });
      });
    });

  before(async () => {
    dataDir = tempDir('svc-cli-server-');
    const { SVC_SERVER: _server, SVC_TOKEN: _token, ...inherited } = process.env;
    // No SVC_SERVER/SVC_TOKEN, an empty config dir, no local owner token: only `svc login` can sign the CLI in.
    env = {
      ...inherited,
      SVC_CACHE_DIR: testCacheDir,
      NO_COLOR: '1',
      SVC_CONFIG_DIR: tempDir('svc-cli-config-'),
      SVC_DATA_DIR: tempDir('svc-cli-nodata-'),
    };
    server = spawn(process.execPath, [cli, 'server', '--port', '0', '--data-dir', dataDir], {
      env: { ...env, SVC_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    url = await new Promise<string>((resolve, reject) => {
      server.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const found = /listening on (http:\/\/\S+)/.exec(out)?.[1];
        if (found && out.endsWith('\n\n')) resolve(found);
      });
      server.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
      server.once('exit', (code) => reject(new Error(`svc server exited with ${code} before listening:\n${err}`)));
    });
    owner = readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
  });

  after(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
  });

  it('is not signed in at first: exit 1, the error and its hint on stderr, nothing on stdout', async () => {
    const ran = await svc('app', 'list');
    assert.equal(ran.code, 1);
    assert.equal(ran.stdout, '');
    assert.match(ran.stderr, /✗ svc found no token/);
    assert.match(ran.stderr, /svc login/);
  });

  it('svc login: prints the link and code on stderr, gets a token once approved through the API, and saves it', async () => {
    const child = spawn(process.execPath, [cli, 'login', '--server', url, '--no-browser'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const userCode = await new Promise<string>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const found = /code: ([A-Z]{4}-[A-Z]{4})/.exec(stderr)?.[1];
        if (found) resolve(found);
      });
      child.once('exit', (code) => reject(new Error(`svc login exited with ${code}:\n${stderr}`)));
    });
    assert.ok(stderr.includes(`${url}/device?user_code=${userCode}`), stderr);
    const approved = await fetch(`${url}/api/v1/device/approve`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${owner}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ user_code: userCode }),
    });
    assert.equal(approved.status, 200);
    assert.equal(await exited, 0, stderr);
    assert.match(stdout, /^Signed in to http:\/\/127\.0\.0\.1:\d+ as acc_\w+ \(owner\) in workspace default\.\n$/);
    assert.ok(!stdout.includes(userCode));
    const saved = JSON.parse(readFileSync(path.join(env.SVC_CONFIG_DIR!, 'credentials.json'), 'utf8'));
    assert.equal(saved.server, url);
    token = saved.token;

    const who = await svc('whoami', '--json');
    assert.equal(who.code, 0, who.stderr);
    assert.deepEqual(
      { ...JSON.parse(who.stdout), subject: undefined, tokenId: undefined },
      {
        server: url,
        workspace: 'default',
        role: 'owner',
        subject: undefined,
        tokenId: undefined,
        sources: { server: path.join(env.SVC_CONFIG_DIR!, 'credentials.json'), token: path.join(env.SVC_CONFIG_DIR!, 'credentials.json') },
      },
    );
  });

  it('svc deploy --json: exactly the app and its workloads on stdout, progress on stderr; the URL answers with the saved token', async () => {
    const ran = await svc('deploy', path.relative(packageRoot, quickstartApp), '--json');
    assert.equal(ran.code, 0, ran.stderr);
    const result = JSON.parse(ran.stdout);
    assert.deepEqual(Object.keys(result), ['app', 'workloads']);
    assert.equal(result.app, 'quickstart');
    assert.deepEqual(result.workloads.map((w: { name: string; kind: string }) => [w.name, w.kind]).sort(), [
      ['greet', 'endpoint'],
      ['hello', 'endpoint'],
      ['square', 'function'],
    ]);
    for (const step of [/reading examples\/quickstart\/app\.py/, /bundle [0-9a-f]{12}/, /uploaded/, /deployed quickstart in/])
      assert.match(ran.stderr, step);
    greetUrl = result.workloads.find((w: { name: string }) => w.name === 'greet').url;
    assert.equal(greetUrl, `${url}/default/quickstart/greet/greet`);
    assert.equal(result.workloads.find((w: { name: string }) => w.name === 'square').url, null);

    const greeted = await greet();
    assert.deepEqual(greeted, { status: 200, body: { message: 'Hello, Ada.', length: 11 } });

    // Without --json, stdout is just each workload and its URL.
    const text = await svc('deploy', `${path.relative(packageRoot, quickstartApp)}:greet`);
    assert.equal(text.code, 0, text.stderr);
    assert.equal(text.stdout, `greet  ${greetUrl}\n`);
  });

  it('examples/quickstart/call_remote.py runs square remotely and calls the deployed greet, signed in by svc login', async () => {
    const ran = await new Promise<Ran>((resolve) => {
      execFile(
        process.env.SVC_PYTHON ?? 'python3',
        ['call_remote.py'],
        { env: { ...env, PYTHONPATH: sdkPythonPath }, cwd: path.dirname(quickstartApp) },
        (error, stdout, stderr) => {
          resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr });
        },
      );
    });
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(ran.stdout, "49\n{'message': 'Hello, Ada!', 'length': 11}\n");
  });

  it('lists the app and its deployments, as tables and as JSON', async () => {
    const apps = await svc('app', 'list', '--json');
    assert.equal(apps.code, 0, apps.stderr);
    assert.deepEqual(
      JSON.parse(apps.stdout).apps.map((a: { name: string }) => a.name),
      ['quickstart'],
    );
    const table = await svc('deployment', 'list', '--app', 'quickstart');
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^NAME +KIND +STATUS +CONTAINERS +SCALE +URL\n/);
    assert.ok(table.stdout.includes(greetUrl), table.stdout);
    const logs = await svc('logs', 'quickstart', '--json');
    assert.equal(logs.code, 0, logs.stderr);
    const lines = logs.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.ok(lines.some((line) => line.workload === 'greet') && lines.some((line) => line.workload === 'hello'), logs.stdout);
  });

  it('pause (503 app_paused), resume (200), deployment stop (503 deployment_stopped)', async () => {
    const paused = await svc('app', 'pause', 'quickstart');
    assert.equal(paused.code, 0, paused.stderr);
    assert.match(paused.stdout, /quickstart\/greet +endpoint +paused/);
    assert.match(paused.stderr, /paused quickstart/);
    assert.equal((await greet()).status, 503);

    const resumed = await svc('app', 'resume', 'quickstart', '--json');
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(JSON.parse(resumed.stdout).paused, false);
    assert.equal((await greet()).status, 200);

    const stopped = await svc('deployment', 'stop', 'quickstart/greet');
    assert.equal(stopped.code, 0, stopped.stderr);
    const after = await greet();
    assert.deepEqual([after.status, (after.body as { error: { code: string } }).error.code], [503, 'deployment_stopped']);
  });

  it("errors exit 1 with the server's message on stderr and nothing on stdout", async () => {
    const ran = await svc('app', 'pause', 'nope');
    assert.equal(ran.code, 1);
    assert.equal(ran.stdout, '');
    assert.match(ran.stderr, /✗ no app nope in workspace default/);
    const usage = await svc('deployment', 'stop', 'quickstart');
    assert.equal(usage.code, 1);
    assert.match(usage.stderr, /<app>\/<workload>/);
  });

  it("svc deploy of an app whose import fails: exit 1 with Python's traceback (the bundle is made beside it, never sent)", async () => {
    const project = tempDir('svc-cli-broken-');
    writeFileSync(path.join(project, 'app.py'), 'import svc\napp = svc.App("broken")\nraise RuntimeError("broken at import")\n');
    const ran = await svc('deploy', path.join(project, 'app.py'));
    assert.equal(ran.code, 1);
    assert.equal(ran.stdout, '');
    assert.match(ran.stderr, /Python could not load .*app\.py/);
    assert.match(ran.stderr, /RuntimeError: broken at import/);
    assert.doesNotMatch(ran.stderr, /bundle|upload/);
    const apps = await svc('app', 'list', '--json');
    assert.doesNotMatch(apps.stdout, /broken/);
  });

  it('svc run: the function’s output streams to stderr as printed, its result alone on stdout; a remote exception exits 1 with its traceback', async () => {
    const target = `${path.relative(packageRoot, runsApp)}:square`;
    const ran = await svc('run', target, '7');
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(ran.stdout, '49\n');
    assert.match(ran.stderr, /squaring 7/);
    assert.match(ran.stderr, /a line on stderr/);
    const named = await svc('run', target, '--x', '8');
    assert.deepEqual([named.code, named.stdout], [0, '64\n']);
    const failed = await svc('run', `${path.relative(packageRoot, runsApp)}:fail`, '--message', 'no such thing');
    assert.equal(failed.code, 1);
    assert.equal(failed.stdout, '');
    assert.match(failed.stderr, /raise ValueError\(message\)/);
    assert.match(failed.stderr, /ValueError: no such thing/);
    const bad = await svc('run', target, 'seven');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /\bx\b.*int/);
    // The runs ended with the commands: none is left on the server.
    const runs = await fetch(`${url}/api/v1/runs`, { headers: { Authorization: `Bearer ${token}` } });
    assert.deepEqual(((await runs.json()) as { runs: unknown[] }).runs, []);
  });

  it('svc deploy --prune removes the deployments the code no longer has: their URL answers 404', async () => {
    const v1 = await svc('deploy', path.join(lifecycle, 'v1', 'app.py'), '--json');
    assert.equal(v1.code, 0, v1.stderr);
    const otherUrl = JSON.parse(v1.stdout).workloads.find((w: { name: string }) => w.name === 'other').url;
    assert.equal((await fetch(otherUrl)).status, 200);
    const pruned = await svc('deploy', path.join(lifecycle, 'v2', 'app.py'), '--prune', '--json');
    assert.equal(pruned.code, 0, pruned.stderr);
    assert.deepEqual(
      JSON.parse(pruned.stdout).workloads.map((w: { name: string }) => w.name),
      ['hello'],
    );
    assert.equal((await fetch(otherUrl, { headers: { Authorization: `Bearer ${token}` } })).status, 404);
    assert.equal((await svc('app', 'delete', 'life', '--yes')).code, 0);
  });

  it('svc example list and download: the example lands in a new folder', async () => {
    const listed = await svc('example', 'list', '--json');
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(
      JSON.parse(listed.stdout).examples.some((e: { name: string }) => e.name === 'quickstart'),
      listed.stdout,
    );
    const dir = path.join(tempDir('svc-cli-example-'), 'qs');
    const downloaded = await svc('example', 'download', 'quickstart', '--dir', dir);
    assert.equal(downloaded.code, 0, downloaded.stderr);
    assert.equal(readFileSync(path.join(dir, 'app.py'), 'utf8'), readFileSync(quickstartApp, 'utf8'));
    const again = await svc('example', 'download', 'quickstart', '--dir', dir);
    assert.equal(again.code, 1, 'an existing folder is not overwritten');
  });

  it('deployment delete removes one deployment: its URL answers 404, the app keeps the others', async () => {
    const listed = JSON.parse((await svc('deployment', 'list', '--app', 'quickstart', '--json')).stdout);
    const hello = (listed.deployments as { name: string; urls: { path: string } }[]).find((d) => d.name === 'quickstart/hello')!;
    assert.equal((await fetch(hello.urls.path)).status, 200);
    const deleted = await svc('deployment', 'delete', 'quickstart:hello');
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.equal((await fetch(hello.urls.path, { headers: { Authorization: `Bearer ${token}` } })).status, 404);
    const after = JSON.parse((await svc('deployment', 'list', '--app', 'quickstart', '--json')).stdout);
    assert.deepEqual((after.deployments as { name: string }[]).map((d) => d.name).sort(), ['quickstart/greet', 'quickstart/square']);
  });

  it('app delete refuses without --yes when not on a terminal, and deletes with it: the URL answers 404', async () => {
    const refused = await svc('app', 'delete', 'quickstart');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /--yes/);
    assert.equal((await svc('app', 'list', '--json')).stdout.includes('quickstart'), true);
    const deleted = await svc('app', 'delete', 'quickstart', '--yes');
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.equal((await greet()).status, 404);
  });

  it('token create prints only the secret on stdout', async () => {
    const ran = await svc('token', 'create', '--name', 'ci', '--expires-in', '1d');
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stdout, /^svc_[0-9A-Za-z]{40}\n$/);
    assert.match(ran.stderr, /created the token tok_[0-9a-f]{12} "ci"/);
  });

  it('logout revokes the token and deletes the credentials file', async () => {
    const ran = await svc('logout');
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stderr, /revoked the token tok_/);
    assert.equal(existsSync(path.join(env.SVC_CONFIG_DIR!, 'credentials.json')), false);
    const who = await fetch(`${url}/api/v1/whoami`, { headers: { Authorization: `Bearer ${token}` } });
    assert.equal(who.status, 401);
  });

  async function greet(): Promise<{ status: number; body: unknown }> {
    const response = await fetch(greetUrl, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Ada' }),
    });
    return { status: response.status, body: await response.json() };
  }
});
