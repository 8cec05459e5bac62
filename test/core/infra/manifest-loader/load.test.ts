import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SvcError } from '../../../../core/model/errors.js';
import { loadManifest, type LoadManifestOptions } from '../../../../core/infra/manifest-loader/load.js';
import { examplesRoot, sdkPythonPath } from '../../../../core/model/paths.js';
import { resolveApp } from '../../../../core/model/workload/resolve.js';
import { readJsonFixture } from '../../model/workload/manifest/fixtures.js';
import { sampleManifest } from '../../model/workload/manifest/sample-manifest.js';

async function loadFailure(opts: LoadManifestOptions): Promise<SvcError> {
  try {
    await loadManifest(opts);
  } catch (error) {
    assert.ok(error instanceof SvcError, String(error));
    return error;
  }
  assert.fail('expected loadManifest to fail');
}

describe('loadManifest()', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'svc-manifest-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function writeApp(name: string, source: string): Promise<string> {
    const file = path.join(dir, name);
    await writeFile(file, source);
    return file;
  }

  describe('with real Python and the svc SDK', () => {
    it('describes the quickstart example exactly as its golden manifest', async () => {
      const target = path.join(examplesRoot, 'quickstart', 'app.py');
      const loaded = await loadManifest({ target });
      const golden = readJsonFixture('quickstart.json');
      assert.equal(loaded.root, path.join(examplesRoot, 'quickstart'));
      assert.deepEqual(loaded.raw, golden);
      assert.deepEqual(loaded.spec, resolveApp(loaded.raw));
      assert.deepEqual(loaded.logs, []);
    });

    it('names a workload after its Python function as a valid label, and keeps the function name as handler', async () => {
      const source = [
        'import svc',
        'app = svc.App("names")',
        '',
        '@app.endpoint(route="/hi")',
        'def say_hello() -> str:',
        '    return "hi"',
        '',
        '@app.function',
        'def _Private_Fn() -> None:',
        '    pass',
        '',
      ].join('\n');
      const loaded = await loadManifest({ target: await writeApp('names.py', source) });
      assert.deepEqual(
        loaded.raw.workloads.map((w) => [w.name, w.handler]),
        [
          ['say-hello', 'say_hello'],
          ['private-fn', '_Private_Fn'],
        ],
      );
      assert.deepEqual(
        loaded.spec.workloads.map((w) => w.name),
        ['say-hello', 'private-fn'],
      );
    });

    it('reports a name the SDK refuses at the decorator line, with its suggestion', async () => {
      const file = await writeApp(
        'badname.py',
        'import svc\napp = svc.App("badname")\n\n@app.function(name="say_hello")\ndef f() -> None:\n    pass\n',
      );
      const error = await loadFailure({ target: file });
      assert.equal(error.code, 'manifest_failed');
      assert.match(
        error.message,
        /InvalidOptionError: @app\.function: name='say_hello' has the character "_" at position 4; only a-z, 0-9 and "-" are allowed; try "say-hello"/,
      );
    });

    it('reports a syntax error with the Python traceback', async () => {
      const file = await writeApp('broken.py', 'import svc\napp = svc.App("broken")\n\ndef oops(:\n    pass\n');
      const error = await loadFailure({ target: file });
      assert.equal(error.code, 'manifest_failed');
      assert.match(error.message, /^Python could not load .*broken\.py:\n/);
      assert.match(error.message, /SyntaxError/);
      assert.match(error.message, /broken\.py", line 4/);
      assert.match(error.hint ?? '', /python3? -m svc\.manifest .*broken\.py/);
    });

    it('reports an import error with the missing module', async () => {
      const file = await writeApp('needs.py', 'import svc\nimport not_installed_anywhere_xyz\napp = svc.App("needs")\n');
      const error = await loadFailure({ target: file });
      assert.equal(error.code, 'manifest_failed');
      assert.match(error.message, /ModuleNotFoundError: No module named 'not_installed_anywhere_xyz'/);
    });

    it('reports a module without an App in one line', async () => {
      const file = await writeApp('plain.py', 'x = 1\n');
      const error = await loadFailure({ target: file });
      assert.equal(error.code, 'manifest_failed');
      assert.match(error.message, /App/);
      assert.equal(error.message.includes('\n'), false, error.message);
      assert.deepEqual((error.details as { exitCode: number }).exitCode, 2);
    });

    it('imports a module name from cwd and returns what the code printed', async () => {
      await writeApp(
        'tool.py',
        [
          'import sys',
          'import svc',
          'print("hello from import")',
          'print("careful", file=sys.stderr)',
          'app = svc.App("tool")',
          '@app.function',
          'def square(x: int) -> int:',
          '    return x * x',
          '',
        ].join('\n'),
      );
      const loaded = await loadManifest({ target: 'tool', cwd: dir });
      assert.equal(loaded.root, dir);
      assert.equal(loaded.spec.name, 'tool');
      assert.deepEqual(
        loaded.spec.workloads.map((workload) => [workload.name, workload.kind]),
        [['square', 'function']],
      );
      assert.ok(loaded.logs.includes('hello from import'), JSON.stringify(loaded.logs));
      assert.ok(loaded.logs.includes('careful'), JSON.stringify(loaded.logs));
    });
  });

  describe('when the import does not finish', function () {
    this.timeout(15_000);

    /** Sets SVC_MANIFEST_TIMEOUT (undefined: unsets it) while `body` runs. */
    async function withTimeoutEnv<T>(value: string | undefined, body: () => Promise<T>): Promise<T> {
      const previous = process.env.SVC_MANIFEST_TIMEOUT;
      if (value === undefined) delete process.env.SVC_MANIFEST_TIMEOUT;
      else process.env.SVC_MANIFEST_TIMEOUT = value;
      try {
        return await body();
      } finally {
        if (previous === undefined) delete process.env.SVC_MANIFEST_TIMEOUT;
        else process.env.SVC_MANIFEST_TIMEOUT = previous;
      }
    }

    /** True while `pid` runs (a zombie waiting to be reaped counts as gone). */
    async function isRunning(pid: number): Promise<boolean> {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
      if (stat === null) return false;
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
    }

    it('kills Python and what it started after timeoutMs and says what to look for', async () => {
      const file = await writeApp(
        'slow.py',
        [
          'import subprocess, sys, time',
          'child = subprocess.Popen(["sleep", "60"])',
          `open(${JSON.stringify(path.join(dir, 'child.pid'))}, "w").write(str(child.pid))`,
          'print("connecting to the database...", file=sys.stderr, flush=True)',
          'time.sleep(60)',
          '',
        ].join('\n'),
      );
      const started = Date.now();
      const error = await loadFailure({ target: file, timeoutMs: 1500 });
      assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
      assert.equal(error.code, 'manifest_failed');
      assert.equal(error.message, `importing ${file} did not finish within 1.5 s; it printed:\nconnecting to the database...`);
      assert.match(error.hint ?? '', /waits for input/);
      assert.match(error.hint ?? '', /network call/);
      assert.match(error.hint ?? '', /SVC_MANIFEST_TIMEOUT/);
      assert.deepEqual(error.details, { timeoutMs: 1500, exitCode: null, signal: 'SIGKILL', stderr: 'connecting to the database...' });
      const childPid = Number(await readFile(path.join(dir, 'child.pid'), 'utf8'));
      const deadline = Date.now() + 5000;
      while ((await isRunning(childPid)) && Date.now() < deadline) await new Promise((done) => setTimeout(done, 50));
      assert.equal(await isRunning(childPid), false, `the import's child ${childPid} is still running`);
    });

    it('reads the timeout from SVC_MANIFEST_TIMEOUT in seconds; timeoutMs wins over it', async () => {
      const file = await writeApp('sleepy.py', 'import time\ntime.sleep(60)\n');
      const fromEnv = await withTimeoutEnv('0.5', () => loadFailure({ target: file }));
      assert.match(fromEnv.message, /^importing .*sleepy\.py did not finish within 0\.5 s$/);
      const fromOption = await withTimeoutEnv('1000', () => loadFailure({ target: file, timeoutMs: 300 }));
      assert.match(fromOption.message, /did not finish within 0\.3 s$/);
    });

    it('does not hold back a quick import', async () => {
      const file = await writeApp('quick.py', 'import svc\napp = svc.App("quick")\n');
      const loaded = await withTimeoutEnv('5', () => loadManifest({ target: file }));
      assert.equal(loaded.spec.name, 'quick');
    });

    it('refuses an SVC_MANIFEST_TIMEOUT that is not a positive number, before running Python', async () => {
      await writeApp('app.py', '');
      for (const value of ['abc', '0', '-5', '10s', 'Infinity']) {
        const error = await withTimeoutEnv(value, () =>
          loadFailure({ target: 'app.py', cwd: dir, python: path.join(dir, 'no-such-python') }),
        );
        assert.equal(error.code, 'config_invalid', value);
        assert.equal(error.message, `SVC_MANIFEST_TIMEOUT must be a positive number of seconds, got ${JSON.stringify(value)}`);
        assert.match(error.hint ?? '', /such as 300/);
      }
      const bad = await loadFailure({ target: 'app.py', cwd: dir, timeoutMs: 0 });
      assert.equal(bad.code, 'config_invalid');
      assert.match(bad.message, /timeoutMs must be a positive number of milliseconds, got 0/);
    });
  });

  describe('with a stand-in interpreter', () => {
    /** An executable shell script used as `python`. */
    async function fakePython(body: string): Promise<string> {
      const file = path.join(dir, 'fake-python');
      await writeFile(file, `#!/bin/sh\n${body}\n`);
      await chmod(file, 0o755);
      return file;
    }

    it("runs `-m svc.manifest <file>` in the file's folder with the SDK first on PYTHONPATH", async () => {
      const manifestFile = path.join(dir, 'manifest.json');
      await writeFile(manifestFile, JSON.stringify(sampleManifest()));
      const app = await writeApp('app.py', '');
      const python = await fakePython(
        `echo "args=$*" >&2; echo "cwd=$(pwd)" >&2; echo "path=$PYTHONPATH" >&2; echo "nobytecode=$PYTHONDONTWRITEBYTECODE" >&2; cat '${manifestFile}'`,
      );
      const previous = process.env.PYTHONPATH;
      const previousBytecode = process.env.PYTHONDONTWRITEBYTECODE;
      process.env.PYTHONPATH = '/already/there';
      delete process.env.PYTHONDONTWRITEBYTECODE; // so the test sees what loadManifest sets
      try {
        const loaded = await loadManifest({ target: 'app.py', cwd: dir, python });
        assert.deepEqual(loaded.logs, [
          `args=-m svc.manifest ${app}`,
          `cwd=${dir}`,
          `path=${sdkPythonPath}${path.delimiter}/already/there`,
          'nobytecode=1',
        ]);
        assert.equal(loaded.root, dir);
        assert.deepEqual(loaded.raw, sampleManifest());
        assert.deepEqual(loaded.spec, resolveApp(sampleManifest()));
      } finally {
        if (previous === undefined) delete process.env.PYTHONPATH;
        else process.env.PYTHONPATH = previous;
        if (previousBytecode !== undefined) process.env.PYTHONDONTWRITEBYTECODE = previousBytecode;
      }
    });

    it('passes the whole stderr of exit 1 as the traceback', async () => {
      await writeApp('app.py', '');
      const python = await fakePython('echo "Traceback (most recent call last):" >&2; echo "ValueError: boom" >&2; exit 1');
      const error = await loadFailure({ target: 'app.py', cwd: dir, python });
      assert.equal(error.code, 'manifest_failed');
      assert.equal(error.message, `Python could not load app.py:\nTraceback (most recent call last):\nValueError: boom`);
    });

    it('uses the last stderr line of exit 2 as the message', async () => {
      await writeApp('app.py', '');
      const python = await fakePython('echo "user output" >&2; echo "svc.manifest: app.py defines no svc.App" >&2; exit 2');
      const error = await loadFailure({ target: 'app.py', cwd: dir, python });
      assert.equal(error.code, 'manifest_failed');
      assert.equal(error.message, 'svc.manifest: app.py defines no svc.App');
    });

    it('reports other exit codes with stderr', async () => {
      await writeApp('app.py', '');
      const python = await fakePython('echo "Killed" >&2; exit 137');
      const error = await loadFailure({ target: 'app.py', cwd: dir, python });
      assert.equal(error.code, 'manifest_failed');
      assert.match(error.message, /exited with code 137 .*:\nKilled$/);
    });

    it('reports output that is not JSON as manifest_invalid with its position', async () => {
      await writeApp('app.py', '');
      const python = await fakePython('echo "{}"; echo "debug: loaded"');
      const error = await loadFailure({ target: 'app.py', cwd: dir, python });
      assert.equal(error.code, 'manifest_invalid');
      assert.match(error.message, /line 2, column 1/);
    });
  });

  describe('before running Python', () => {
    it('reports a missing file as manifest_failed without spawning', async () => {
      const error = await loadFailure({ target: 'missing.py', cwd: dir, python: path.join(dir, 'no-such-python') });
      assert.equal(error.code, 'manifest_failed');
      assert.equal(error.message, `File not found: ${path.join(dir, 'missing.py')}`);
    });

    it('reports a missing folder for a module name', async () => {
      const error = await loadFailure({ target: 'app', cwd: path.join(dir, 'gone'), python: 'python3' });
      assert.equal(error.code, 'manifest_failed');
      assert.match(error.message, /^Folder not found: /);
    });

    it('reports a missing interpreter as python_unavailable with a hint', async () => {
      await writeApp('app.py', '');
      const error = await loadFailure({ target: 'app.py', cwd: dir, python: path.join(dir, 'no-such-python') });
      assert.equal(error.code, 'python_unavailable');
      assert.match(error.hint ?? '', /SVC_PYTHON/);
    });

    it('uses SVC_PYTHON when no interpreter is given', async () => {
      await writeApp('app.py', '');
      const previous = process.env.SVC_PYTHON;
      process.env.SVC_PYTHON = path.join(dir, 'svc-python-from-env');
      try {
        const error = await loadFailure({ target: 'app.py', cwd: dir });
        assert.equal(error.code, 'python_unavailable');
        assert.match(error.message, /svc-python-from-env/);
      } finally {
        if (previous === undefined) delete process.env.SVC_PYTHON;
        else process.env.SVC_PYTHON = previous;
      }
    });
  });
});
