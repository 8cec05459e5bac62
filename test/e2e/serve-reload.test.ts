/**
 * `svc serve` live reload, as a user sees it: the real CLI serves a copy of
 * test/fixtures/serve-reload, the test edits its files, and the URLs answer
 * the new code; requests in flight finish on the old version, a save that
 * breaks the code keeps the last good version serving, a save without
 * changes reloads nothing, and Ctrl-C leaves no process behind.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import { socketBase } from '../../core/infra/scheduler/local/socket-dir.js';
import { tempDir, testCacheDir } from '../helpers/config.js';
import { pidsMatching, waitNoneMatching } from '../helpers/processes.js';
import { until, type UntilOptions } from '../helpers/until.js';
import { untilServing } from './serve-output.js';

const cli = path.join(packageRoot, 'dist', 'cli', 'index.js');
const fixture = path.join(packageRoot, 'test', 'fixtures', 'serve-reload');

interface Served {
  readonly child: ChildProcess;
  readonly urls: Record<string, string>;
  stdout: string;
  stderr: string;
}

const RELOADED = /✓ reloaded in \d+ ms \(([^)]*)\)/g;

/** How the tests wait on `svc serve`: 60 s at most (a bound on a hang), and a failure shows the end of what svc printed. */
const waitOn = (served: Served): UntilOptions => ({ timeoutMs: 60_000, context: () => `svc printed:\n${served.stderr.slice(-4000)}` });

async function greeting(url: string): Promise<{ status: number; greeting?: string }> {
  const response = await fetch(url);
  const body = (await response.json()) as { greeting?: string };
  return { status: response.status, greeting: body.greeting };
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));
}

/** Serves a fresh copy of the fixture with the real CLI; resolves once the summary is printed. */
async function startServe(): Promise<{ served: Served; project: string; dataDir: string }> {
  const project = tempDir('svc-reload-');
  cpSync(fixture, project, { recursive: true });
  const dataDir = tempDir('svc-reload-data-');
  const child = spawn(process.execPath, [cli, 'serve', path.join(project, 'app.py'), '--port', '0', '--data-dir', dataDir], {
    env: { ...process.env, SVC_CACHE_DIR: testCacheDir, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const served: Served = { child, urls: {}, stdout: '', stderr: '' };
  await untilServing(child, served);
  for (const name of ['hello', 'slow', 'extra']) {
    const url = new RegExp(`http://\\S+/reload--preview/${name}(?=\\s)`).exec(served.stdout)?.[0];
    assert.ok(url, `a URL for ${name} in:\n${served.stdout}`);
    served.urls[name] = url;
  }
  return { served, project, dataDir };
}

describe('svc serve: live reload (command line)', function () {
  this.timeout(180_000);
  let project: string;
  let file: string;
  let served: Served;
  let dataDir: string;

  const reloads = () => [...served.stderr.matchAll(RELOADED)].map((match) => match[1]);
  const save = (edit: (source: string) => string) => writeFileSync(file, edit(readFileSync(file, 'utf8')));

  before(async () => {
    ({ served, project, dataDir } = await startServe());
    file = path.join(project, 'app.py');
    assert.deepEqual(await greeting(served.urls.hello!), { status: 200, greeting: 'first' });
  });

  after(async () => {
    if (served?.child.exitCode === null) {
      served.child.kill('SIGKILL');
      await exited(served.child);
    }
  });

  it('swaps in the new code on save: the URL answers the new text, and one reload line says so', async () => {
    save((source) => source.replace('GREETING = "first"', 'GREETING = "second"'));
    await until('hello answers the new text', async () => (await greeting(served.urls.hello!)).greeting === 'second', waitOn(served));
    await until('the reload line', () => reloads().length === 1, waitOn(served));
    assert.deepEqual(reloads(), ['app.py']);
  });

  it('lets a request in flight during the reload finish with 200 on the old version', async () => {
    const seen = served.stderr.length;
    const inFlight = greeting(served.urls.slow!);
    await until('the slow request is in flight', () => served.stderr.slice(seen).includes('slow request started'), waitOn(served));
    save((source) => source.replace('GREETING = "second"', 'GREETING = "third"'));
    await until('hello answers the new text', async () => (await greeting(served.urls.hello!)).greeting === 'third', waitOn(served));
    assert.deepEqual(await inFlight, { status: 200, greeting: 'second' });
    assert.deepEqual(await greeting(served.urls.slow!), { status: 200, greeting: 'third' });
  });

  it('prints the traceback of a save that does not import and keeps the last good version serving', async () => {
    await until('the previous reload line', () => reloads().length === 2, waitOn(served));
    const seen = served.stderr.length;
    save((source) => `${source}\ndef broken(:\n`);
    await until('the failure is reported', () => served.stderr.slice(seen).includes('the previous version keeps serving'), waitOn(served));
    const report = served.stderr.slice(seen);
    assert.match(report, /✗ reload failed \(app\.py\): Python could not load/);
    assert.match(report, /SyntaxError/);
    assert.match(report, /app\.py", line \d+/);
    assert.deepEqual(await greeting(served.urls.hello!), { status: 200, greeting: 'third' });
    assert.equal(reloads().length, 2);
  });

  it('reloads once the error is fixed', async () => {
    save((source) => source.replace('\ndef broken(:\n', '').replace('GREETING = "third"', 'GREETING = "fixed"'));
    await until('hello answers the fixed code', async () => (await greeting(served.urls.hello!)).greeting === 'fixed', waitOn(served));
    await until('the reload line', () => reloads().length === 3, waitOn(served));
  });

  it('does not reload on a save without changes', async () => {
    const before = reloads().length;
    const source = readFileSync(file, 'utf8');
    writeFileSync(file, source);
    const now = new Date();
    utimesSync(file, now, now);
    // A pause, so that the next save is not gathered into the same batch (the test holds either way).
    await new Promise((resolve) => setTimeout(resolve, 300));
    // A real change afterwards: reloads are never concurrent, so any reload of the unchanged save comes first.
    writeFileSync(path.join(project, 'notes.txt'), 'a change that reloads\n');
    await until('the reload of the real change', () => reloads().length > before, waitOn(served));
    assert.deepEqual(reloads().slice(before), ['notes.txt'], 'one reload, for the real change only');
  });

  it('removes a workload deleted from the code: its URL answers 404', async () => {
    const before = reloads().length;
    save((source) => source.replace(/@app\.endpoint\([^\n]*\)\ndef extra\(\)[\s\S]*$/, ''));
    await until('the reload line', () => reloads().length > before, waitOn(served));
    // With a token: without one, a URL that leads nowhere answers 401 rather than say whether it exists.
    const token = readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
    assert.equal((await fetch(served.urls.extra!, { headers: { authorization: `Bearer ${token}` } })).status, 404);
    assert.deepEqual(await greeting(served.urls.hello!), { status: 200, greeting: 'fixed' });
    assert.match(served.stdout, /Preview of reload is live\.[\s\S]*Preview of reload is live\./, 'the URLs are printed again');
  });

  it('exits 0 on Ctrl-C and leaves no runtime, zygote or helper process', async () => {
    const pid = served.child.pid!;
    const containers = `${socketBase()}/${pid}-`;
    const helper = `svc._dev --parent ${pid}`;
    assert.ok(pidsMatching(containers).length >= 3, 'containers and the zygote run');
    assert.equal(pidsMatching(helper).length, 1, 'the warm helper runs');
    served.child.kill('SIGINT');
    assert.equal(await exited(served.child), 0);
    assert.deepEqual(await waitNoneMatching(containers, 5_000), []);
    assert.deepEqual(await waitNoneMatching(helper, 5_000), []);
  });
});

describe('svc serve: live reload when svc is killed (command line)', function () {
  this.timeout(180_000);

  it('leaves no container forked from the zygote, no zygote and no helper behind after SIGKILL', async () => {
    const { served, project } = await startServe();
    const file = path.join(project, 'app.py');
    const pid = served.child.pid!;
    try {
      await until('the zygote is ready', () => served.stderr.includes('zygote ready'), waitOn(served));
      writeFileSync(file, readFileSync(file, 'utf8').replace('GREETING = "first"', 'GREETING = "second"'));
      await until('hello answers the new text', async () => (await greeting(served.urls.hello!)).greeting === 'second', waitOn(served));
      assert.match(served.stderr, /container c-\w+ forked from zygote z-\w+/);
    } finally {
      served.child.kill('SIGKILL');
      await exited(served.child);
    }
    assert.deepEqual(await waitNoneMatching(`${socketBase()}/${pid}-`, 10_000), []);
    assert.deepEqual(await waitNoneMatching(`svc._dev --parent ${pid}`, 10_000), []);
  });
});
