/**
 * `svc serve --server`: the live preview on a real `svc server` child
 * process. The real CLI serves a copy of test/fixtures/serve-reload there:
 * the printed URLs are the server's, a save reloads the preview through the
 * API, the app's log lines come back over the log streams, nothing runs in
 * the serve process but the warm helper, and Ctrl-C deletes the preview.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import { socketBase } from '../../core/infra/scheduler/local/socket-dir.js';
import { tempDir, testCacheDir } from '../helpers/config.js';
import { pidsMatching } from '../helpers/processes.js';
import { until, type UntilOptions } from '../helpers/until.js';

const cli = path.join(packageRoot, 'dist', 'cli', 'index.js');
const fixture = path.join(packageRoot, 'test', 'fixtures', 'serve-reload');
const RELOADED = /✓ reloaded in \d+ ms \(([^)]*)\)/g;

interface Child {
  readonly child: ChildProcess;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: NodeJS.ProcessEnv): Child {
  const child = spawn(process.execPath, [cli, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const ran: Child = { child, stdout: '', stderr: '' };
  child.stdout!.on('data', (chunk: Buffer) => (ran.stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (ran.stderr += chunk.toString()));
  return ran;
}

/** How the tests wait on a svc process: 90 s at most (a bound on a hang), failing at once if it exits, with the end of what it printed. */
const waitOn = (ran: Child): UntilOptions => ({
  timeoutMs: 90_000,
  abort: () => (ran.child.exitCode === null ? undefined : `svc exited with ${ran.child.exitCode}`),
  context: () => `svc printed:\n${ran.stderr.slice(-4000)}`,
});

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));
}

async function greeting(url: string): Promise<{ status: number; greeting?: string }> {
  const response = await fetch(url);
  const text = await response.text();
  return response.ok
    ? { status: response.status, greeting: (JSON.parse(text) as { greeting?: string }).greeting }
    : { status: response.status };
}

/** The command lines of the processes whose parent is `pid`. */
function childrenOf(pid: number): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) found.push(readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim());
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

describe('svc serve --server: the live preview on a svc server (command line)', function () {
  this.timeout(240_000);
  let server: Child;
  let url: string;
  let owner: string;
  let env: NodeJS.ProcessEnv;
  let served: Child;
  let file: string;
  let hello: string;
  const api = (method: string, apiPath: string) =>
    fetch(`${url}/api/v1${apiPath}`, { method, headers: { authorization: `Bearer ${owner}` } });
  const reloads = () => [...served.stderr.matchAll(RELOADED)].map((match) => match[1]);
  const save = (edit: (source: string) => string) => writeFileSync(file, edit(readFileSync(file, 'utf8')));

  before(async () => {
    const dataDir = tempDir('svc-serve-server-data-');
    const { SVC_SERVER: _server, SVC_TOKEN: _token, ...inherited } = process.env;
    const base = {
      ...inherited,
      SVC_CACHE_DIR: testCacheDir,
      NO_COLOR: '1',
      SVC_CONFIG_DIR: tempDir('svc-serve-server-config-'),
      SVC_DATA_DIR: tempDir('svc-serve-server-nodata-'),
    };
    server = run(['server', '--port', '0', '--data-dir', dataDir], { ...base, SVC_DATA_DIR: dataDir });
    await until(
      'the server listens',
      () => /listening on http:\/\/\S+/.test(server.stdout) && server.stdout.endsWith('\n\n'),
      waitOn(server),
    );
    url = /listening on (http:\/\/\S+)/.exec(server.stdout)![1]!;
    owner = readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
    env = { ...base, SVC_SERVER: url, SVC_TOKEN: owner };

    const project = tempDir('svc-serve-server-project-');
    cpSync(fixture, project, { recursive: true });
    file = path.join(project, 'app.py');
    served = run(['serve', file, '--server'], env);
    await until(
      'the preview is live',
      () => served.stderr.includes('press Ctrl-C to stop') && /Preview of[\s\S]*\n\n$/.test(served.stdout),
      waitOn(served),
    );
    hello = /http:\/\/\S+\/reload--preview\/hello(?=\s)/.exec(served.stdout)?.[0] ?? '';
  });

  after(async () => {
    for (const ran of [served, server]) {
      if (ran && ran.child.exitCode === null) {
        ran.child.kill('SIGKILL');
        await exited(ran.child);
      }
    }
  });

  it("prints the server's URLs, and the preview answers there", async () => {
    assert.ok(hello.startsWith(`${url}/`), `hello's URL is on the server (${url}):\n${served.stdout}`);
    assert.match(served.stderr, new RegExp(`✓ server ${url.replace(/[.]/g, '\\.')} \\(token from SVC_TOKEN\\)`));
    assert.doesNotMatch(served.stderr, /platform listening/);
    assert.ok(!served.stdout.includes(owner) && !served.stderr.includes(owner), 'the token is never printed');
    assert.deepEqual(await greeting(hello), { status: 200, greeting: 'first' });
    const preview = await api('GET', '/apps/reload/preview');
    assert.equal(preview.status, 200);
    const view = (await preview.json()) as { deployments: { workload: string }[] };
    assert.deepEqual(
      view.deployments.map((d) => d.workload),
      ['extra', 'hello', 'slow'],
    );
  });

  it('runs nothing locally but the warm helper: no runtime, container or zygote of the serve process', () => {
    const pid = served.child.pid!;
    const children = childrenOf(pid);
    assert.ok(
      children.some((command) => command.includes('svc._dev')),
      `the warm helper runs: ${children.join('\n')}`,
    );
    assert.deepEqual(
      children.filter((command) => command.includes('svc.runtime')),
      [],
    );
    assert.deepEqual(pidsMatching(`${socketBase()}/${pid}-`), [], 'no container of the serve process');
    assert.ok(pidsMatching(`${socketBase()}/${server.child.pid}-`).length > 0, 'the containers run under the server');
  });

  it('prints the log lines of the app, prefixed by the workload', async () => {
    const slow = hello.replace(/\/hello$/, '/slow');
    assert.equal((await greeting(slow)).status, 200);
    await until("the app's line is printed", () => /^slow \| slow request started$/m.test(served.stderr), waitOn(served));
  });

  it('reloads on save: the URL answers the new text, one reload line, and the preview on the server has the new version', async () => {
    save((source) => source.replace('GREETING = "first"', 'GREETING = "second"'));
    await until('the reload line', () => reloads().length === 1, waitOn(served));
    assert.deepEqual(reloads(), ['app.py']);
    // The PUT answers once the new version serves: the reload line comes after the switch.
    assert.deepEqual(await greeting(hello), { status: 200, greeting: 'second' });
    const view = (await (await api('GET', '/apps/reload/preview')).json()) as { deployments: { workload: string; version: number }[] };
    assert.equal(view.deployments.find((d) => d.workload === 'hello')?.version, 2);
  });

  it('reports a save that does not import, and keeps the running version', async () => {
    const seen = served.stderr.length;
    save((source) => `${source}\ndef broken(:\n`);
    await until('the failure is reported', () => served.stderr.slice(seen).includes('the previous version keeps serving'), waitOn(served));
    assert.match(served.stderr.slice(seen), /✗ reload failed \(app\.py\): Python could not load[\s\S]*SyntaxError/);
    assert.deepEqual(await greeting(hello), { status: 200, greeting: 'second' });
  });

  it('drops a workload removed from the code: gone from the preview, its URLs printed again, its log stream closed quietly', async () => {
    const before = reloads().length;
    save((source) => source.replace('\ndef broken(:\n', '').replace(/@app\.endpoint\([^\n]*\)\ndef extra\(\)[\s\S]*$/, ''));
    await until('the reload line', () => reloads().length > before, waitOn(served));
    // The save writes in place: a watcher may see the file half written and reload once more, so wait for where the loop settles.
    const workloads = async () =>
      ((await (await api('GET', '/apps/reload/preview')).json()) as { deployments: { workload: string }[] }).deployments
        .map((d) => d.workload)
        .join(',');
    await until('the preview without extra', async () => (await workloads()) === 'hello,slow', { ...waitOn(served), intervalMs: 100 });
    // The CLI prints once its PUT is answered, which may be a moment after the server's view changed.
    await until('the URLs printed again', () => (served.stdout.match(/Preview of reload is live\./g)?.length ?? 0) >= 2, waitOn(served));
    assert.doesNotMatch(served.stderr, /lost its log stream|Stopped following/);
  });

  it('deletes the preview on Ctrl-C and exits 0', async () => {
    served.child.kill('SIGINT');
    assert.equal(await exited(served.child), 0);
    assert.match(served.stderr, /✓ stopped\n$/);
    assert.equal((await api('GET', '/apps/reload/preview')).status, 404);
  });

  it('names the server it cannot reach and exits 1', async () => {
    const ran = run(['serve', file, '--server=http://127.0.0.1:9'], env);
    assert.equal(await exited(ran.child), 1);
    assert.match(ran.stderr, /cannot reach the svc server at http:\/\/127\.0\.0\.1:9 \(from --server\)/);
    assert.equal(ran.stdout, '');
  });
});
