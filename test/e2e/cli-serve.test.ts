import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../../core/model/paths.js';
import { socketBase } from '../../core/infra/scheduler/local/socket-dir.js';
import { quickstartApp, tempDir, testCacheDir } from '../helpers/config.js';
import { pidsMatching, waitNoneMatching } from '../helpers/processes.js';
import { until } from '../helpers/until.js';
import { untilServing } from './serve-output.js';

const run = promisify(execFile);
const cli = path.join(packageRoot, 'dist', 'cli', 'index.js');

interface Served {
  readonly child: ChildProcess;
  readonly dataDir: string;
  /** What svc printed on stdout (the summary, once serving). */
  stdout: string;
  stderr: string;
}

/** Container command lines name their socket folder, which starts with the platform's pid. */
const containersOf = (child: ChildProcess) => `${socketBase()}/${child.pid}-`;

/** Starts `svc serve` as a user would and waits until it printed its summary. */
async function startServe(dataDir = tempDir('svc-cli-')): Promise<Served> {
  const child = spawn(process.execPath, [cli, 'serve', quickstartApp, '--port', '0', '--data-dir', dataDir], {
    env: { ...process.env, SVC_CACHE_DIR: testCacheDir, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const served: Served = { child, dataDir, stdout: '', stderr: '' };
  await untilServing(child, served);
  return served;
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));
}

describe('svc serve (command line)', function () {
  this.timeout(180_000);

  it('prints each endpoint URL with a curl line that works, and Ctrl-C leaves no process', async () => {
    const served = await startServe();
    try {
      const curls = served.stdout
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line.startsWith('curl '));
      assert.equal(curls.length, 2, `two curl lines in:\n${served.stdout}`);
      const hello = curls.find((line) => line.includes('/hello/hello'));
      const greet = curls.find((line) => line.includes('/greet/greet'));
      assert.ok(hello && !hello.includes('Authorization'), 'the public endpoint needs no token');
      assert.ok(greet && greet.includes('Authorization: Bearer $(cat '), 'the protected endpoint reads the owner token');
      for (const line of [hello, greet]) {
        const { stdout } = await run('bash', ['-c', `${line} --silent --show-error --fail-with-body`]);
        assert.ok(JSON.parse(stdout).message, `${line} answered ${stdout}`);
      }
      assert.ok(pidsMatching(containersOf(served.child)).length >= 2, 'both endpoints run in their own container');
    } finally {
      served.child.kill('SIGINT');
    }
    assert.equal(await exited(served.child), 0);
    assert.deepEqual(await waitNoneMatching(containersOf(served.child), 5_000), []);
  });

  it('leaves no container behind when svc itself is killed with SIGKILL', async () => {
    const served = await startServe();
    const marker = containersOf(served.child);
    assert.ok(pidsMatching(marker).length >= 2);
    served.child.kill('SIGKILL');
    await exited(served.child);
    assert.deepEqual(await waitNoneMatching(marker, 10_000), []);
  });

  it('lets two previews share a data dir: stopping one leaves the other serving', async () => {
    const dataDir = tempDir('svc-shared-');
    const first = await startServe(dataDir);
    const second = await startServe(dataDir);
    try {
      first.child.kill('SIGINT');
      assert.equal(await exited(first.child), 0);
      const url = /http:\/\/\S+\/hello\/hello/.exec(second.stdout)?.[0];
      assert.ok(url, second.stdout);
      const response = await fetch(`${url}?name=second`);
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { message: 'Hello, second!' });
    } finally {
      second.child.kill('SIGINT');
      await exited(second.child);
    }
  });

  it('stops an image build it started when it is told to stop, leaving no pip behind', async () => {
    const cacheDir = tempDir('svc-build-');
    const child = spawn(process.execPath, [cli, 'serve', quickstartApp, '--port', '0', '--data-dir', tempDir()], {
      env: { ...process.env, SVC_CACHE_DIR: cacheDir, NO_COLOR: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    await new Promise<void>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('creating a Python')) resolve();
      });
      child.once('exit', () => reject(new Error(`svc serve exited before building:\n${stderr}`)));
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.ok(pidsMatching(cacheDir).length > 0, 'the build runs');
    child.kill('SIGTERM');
    await exited(child);
    assert.deepEqual(await waitNoneMatching(cacheDir, 5_000), []);
  });

  it('builds an image with packages with uv on a new machine (svc brings uv itself) and says so as it builds', async () => {
    const dir = tempDir('svc-uv-app-');
    const app = path.join(dir, 'app.py');
    await writeFile(
      app,
      [
        'import svc',
        'app = svc.App("uv-built")',
        'image = svc.Image().add_python_packages(["six", "idna>=3"])',
        '@app.endpoint(route="/", methods=["GET"], authorized=False, image=image)',
        'def versions() -> dict:',
        '    import idna, six',
        '    return {"six": six.__version__, "idna": idna.__version__}',
        '',
      ].join('\n'),
    );
    // An empty cache dir: no uv, no runtime layer, no image yet.
    const child = spawn(process.execPath, [cli, 'serve', app, '--port', '0', '--data-dir', tempDir()], {
      env: { ...process.env, SVC_CACHE_DIR: tempDir('svc-new-cache-'), NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const served: Served = { child, dataDir: '', stdout: '', stderr: '' };
    try {
      await untilServing(child, served);
      assert.match(served.stderr, /bringing uv \d+\.\d+\.\d+ into .* with pip \(once per cache dir\)/);
      assert.equal(
        (served.stderr.match(/installing with uv \d+\.\d+\.\d+/g) ?? []).length,
        2,
        'the runtime layer and the image, both by uv',
      );
      assert.match(served.stderr, / \+ six==/);
      const url = served.stdout.split(/\s+/).find((word) => word.startsWith('http') && word.includes('/versions'));
      assert.ok(url, served.stdout);
      const answer = (await (await fetch(url)).json()) as { six: string; idna: string };
      assert.match(answer.six, /^\d+\.\d+/);
    } finally {
      child.kill('SIGINT');
      await exited(child);
    }
  });

  it("rebuilds an image when its requirements file changes, and not when only the app's code does", async () => {
    const dir = tempDir('svc-requirements-app-');
    const app = path.join(dir, 'app.py');
    const requirements = path.join(dir, 'requirements.txt');
    // A comment unique to this run: the image is new to the shared cache, so the first start builds it.
    const nonce = `# run ${process.pid}-${Date.now()}\n`;
    await writeFile(requirements, `six==1.16.0\n${nonce}`);
    const source = [
      'import svc',
      'app = svc.App("requirements-file")',
      'image = svc.Image().pip_install_from_requirements("requirements.txt")',
      '@app.endpoint(route="/", methods=["GET"], authorized=False, image=image)',
      'def six_version() -> dict:',
      '    import six',
      '    return {"six": six.__version__}',
      '',
    ].join('\n');
    await writeFile(app, source);
    const child = spawn(process.execPath, [cli, 'serve', app, '--port', '0', '--data-dir', tempDir()], {
      env: { ...process.env, SVC_CACHE_DIR: testCacheDir, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const served: Served = { child, dataDir: '', stdout: '', stderr: '' };
    const builds = () => (served.stderr.match(/creating a Python \d+\.\d+ environment: venv-\S+ with -r requirements\.txt/g) ?? []).length;
    const reloads = () => (served.stderr.match(/✓ reloaded in \d+ ms/g) ?? []).length;
    const waitOn = { timeoutMs: 90_000, context: () => served.stderr.slice(-3000) };
    try {
      await untilServing(child, served);
      const url = served.stdout.split(/\s+/).find((word) => word.startsWith('http') && word.includes('/six-version'));
      assert.ok(url, served.stdout);
      assert.equal(builds(), 1, served.stderr);
      assert.deepEqual(await (await fetch(url)).json(), { six: '1.16.0' });

      await writeFile(app, `${source}# a comment only\n`);
      await until('the comment-only change to reload', () => reloads() === 1, waitOn);
      assert.equal(builds(), 1, 'a change of the code alone keeps the image');

      await writeFile(requirements, `six==1.17.0\n${nonce}`);
      await until('the requirements change to reload', () => reloads() === 2, waitOn);
      assert.equal(builds(), 2, 'the new requirements built a new image');
      assert.deepEqual(await (await fetch(url)).json(), { six: '1.17.0' });
    } finally {
      child.kill('SIGINT');
      await exited(child);
    }
  });

  it('prints the Python traceback and exits 1 when the app does not import', async () => {
    const dir = tempDir('svc-broken-');
    const file = path.join(dir, 'broken.py');
    await writeFile(file, 'import svc\napp = svc.App("broken")\ndef oops(:\n');
    const result = await run(process.execPath, [cli, 'serve', file, '--port', '0', '--data-dir', dir]).then(
      () => assert.fail('svc serve should fail'),
      (error: { code: number; stderr: string }) => error,
    );
    assert.equal(result.code, 1);
    assert.match(result.stderr, /SyntaxError/);
    assert.match(result.stderr, /broken\.py/);
  });

  it('documents its options in --help', async () => {
    const { stdout } = await run(process.execPath, [cli, 'serve', '--help']);
    for (const option of ['--port', '--host', '--data-dir', '--config']) assert.match(stdout, new RegExp(option));
    assert.match(stdout, /svc serve examples\/quickstart\/app\.py/);
  });
});
