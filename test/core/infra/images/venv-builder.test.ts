import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { SvcError } from '../../../../core/model/errors.js';
import type { BuiltImage } from '../../../../core/infra/images/types.js';
import { BYTECODE_MARKER } from '../../../../core/infra/images/later-bytecode.js';
import { createVenvBuilder } from '../../../../core/infra/images/venv-builder.js';
import { findUv, UV_VERSION } from '../../../../core/infra/images/uv-tool.js';
import { sdkPythonPath } from '../../../../core/model/paths.js';
import { spawnGroup } from '../../../../core/infra/processes/group.js';
import { probeHealth } from '../../../../core/infra/scheduler/local/health.js';
import type { ImageSpec } from '../../../../core/model/workload/types.js';
import { tempDir, testCacheDir } from '../../../helpers/config.js';

const python = process.env.SVC_PYTHON ?? 'python3';
const version = execFileSync(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' }).trim();
/** A small pure-Python package from the machine's configured index. */
const EXTRA = 'six';

function image(id: string, pythonPackages: string[] = [], pythonVersion = version): ImageSpec {
  return { id, pythonVersion, pythonPackages, requirementsFiles: [], env: {} };
}

/** What `code` prints, run as svc runs containers: without writing bytecode (so a .pyc found is the build's). */
function pyOutput(pythonPath: string, code: string): string {
  return execFileSync(pythonPath, ['-c', code], {
    encoding: 'utf8',
    env: { ...process.env, PYTHONPATH: '', PYTHONDONTWRITEBYTECODE: '1' },
  }).trim();
}

const count = (lines: readonly string[], pattern: RegExp) => lines.filter((line) => pattern.test(line)).length;
/** uv's summary of one install run ("Installed 2 packages in 3ms"); pip's is "Successfully installed …". */
const UV_INSTALLED = /^Installed \d+ packages? in /;

/** Temporary folders of this file, deleted at the end: some hold whole environments. */
const scratchDirs: string[] = [];
function scratch(prefix: string): string {
  const dir = tempDir(prefix);
  scratchDirs.push(dir);
  return dir;
}

describe('createVenvBuilder()#build()', function () {
  this.timeout(120_000);
  /** The shared runtime layer in the test cache (built here on a cold cache). */
  let layer: BuiltImage;

  before(async () => {
    layer = await createVenvBuilder({ cacheDir: testCacheDir, python }).build(image('img-runtime'), () => {});
    // The shared cache brings uv once (the layer may have been found built), for cacheWithLayer() to link.
    assert.ok('uv' in (await findUv({ cacheDir: testCacheDir, python, uvPath: null }, () => {})), 'svc brings uv from the index');
    mkdirSync(path.join(testCacheDir, 'uv'), { recursive: true });
  });

  after(() => {
    for (const dir of scratchDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A fresh cache dir that already holds the runtime layer, and the uv svc brought with uv's
   * cache (links to the shared ones): tests then build only their image.
   */
  function cacheWithLayer({ withUv = true } = {}): { cacheDir: string; images: string } {
    const cacheDir = scratch('svc-cache-');
    const images = path.join(cacheDir, 'images');
    mkdirSync(images);
    symlinkSync(layer.path, path.join(images, path.basename(layer.path)));
    if (withUv) for (const shared of ['tools', 'uv']) symlinkSync(path.join(testCacheDir, shared), path.join(cacheDir, shared));
    return { cacheDir, images };
  }

  it('an image without packages is the runtime layer itself: no pip run, nothing else in the cache', async () => {
    const { cacheDir, images } = cacheWithLayer();
    const lines: string[] = [];
    const built = await createVenvBuilder({ cacheDir, python }).build(image('img-plain'), (line) => lines.push(line));
    assert.equal(built.cached, true);
    assert.equal(built.path, path.join(images, path.basename(layer.path)));
    assert.equal(built.runtimeLayer, built.path);
    assert.equal(built.key, path.basename(layer.path));
    assert.equal(built.imageId, 'img-plain');
    assert.deepEqual(lines, [], 'nothing was built: no venv, no pip');
    assert.deepEqual(readdirSync(images), [path.basename(layer.path)]);
    assert.equal(pyOutput(built.pythonPath, 'import uvicorn, httptools, uvloop, websockets; print("ok")'), 'ok');
  });

  it('builds a missing runtime layer once for images that need it at once, streams its log to each, then finds it in the cache', async () => {
    const cacheDir = scratch('svc-cache-');
    const builder = createVenvBuilder({ cacheDir, python });
    const plainLog: string[] = [];
    const extraLog: string[] = [];
    const [plain, extra] = await Promise.all([
      builder.build(image('img-plain'), (line) => plainLog.push(line)),
      builder.build(image('img-extra', [EXTRA]), (line) => extraLog.push(line)),
    ]);
    assert.equal(plain.cached, false);
    assert.equal(extra.cached, false);
    assert.equal(extra.runtimeLayer, plain.path);
    assert.equal(count(plainLog, /^creating a Python \d+\.\d+ environment: the runtime layer runtime-/), 1);
    assert.equal(
      count(plainLog, /^bringing uv \d+\.\d+\.\d+ into .*tools\/uv-[\d.]+ with pip \(once per cache dir\)$/),
      1,
      plainLog.join('\n'),
    );
    assert.equal(count(plainLog, /^installing with uv \d+\.\d+\.\d+/), 1, 'the log says uv built it');
    assert.ok(count(plainLog, /^ \+ uvicorn==/) === 1, plainLog.join('\n'));
    assert.deepEqual(extraLog.slice(0, plainLog.length), plainLog, 'the image waiting for the layer got its whole log');
    assert.equal(count(extraLog, /^creating a Python \d+\.\d+ environment: venv-/), 1);
    assert.equal(readdirSync(path.join(cacheDir, 'images')).filter((name) => name.startsWith('runtime-')).length, 1);
    const shebang = readFileSync(path.join(plain.path, 'bin', 'uvicorn'), 'utf8').split('\n')[0];
    assert.equal(shebang, `#!${path.join(plain.path, 'bin', 'python')}`, 'scripts name the final folder, not the temporary one built in');

    const again = await builder.build(image('img-plain-2'), () => {});
    assert.deepEqual([again.cached, again.path, again.imageId], [true, plain.path, 'img-plain-2']);
  });

  it('gives an image with packages its own venv over the runtime layer, its packages winning, and finds it in the cache', async () => {
    const { cacheDir, images } = cacheWithLayer();
    const wheel = fakeWheel('h11', '99.0.0');
    const builder = createVenvBuilder({ cacheDir, python });
    const spec = image('img-pkgs', [EXTRA, wheel]);
    const lines: string[] = [];
    const built = await builder.build(spec, (line) => lines.push(line));
    assert.equal(built.cached, false);
    assert.equal(built.key, await builder.keyOf(spec));
    assert.equal(built.path, path.join(images, built.key));
    assert.equal(built.runtimeLayer, path.join(images, path.basename(layer.path)));
    assert.equal(count(lines, /^creating a Python \d+\.\d+ environment: venv-/), 1);
    assert.equal(count(lines, /^installing with uv /), 1, 'the log says uv built it');
    assert.equal(count(lines, UV_INSTALLED), 1, 'one install run, for the image packages only');
    assert.doesNotMatch(lines.join('\n'), /uvicorn|httptools|uvloop/, 'the runtime requirements are not installed again');

    const where = JSON.parse(
      pyOutput(
        built.pythonPath,
        'import json, uvicorn, six, h11; print(json.dumps([uvicorn.__file__, six.__file__, h11.__file__, h11.__version__]))',
      ),
    );
    assert.ok(where[0].startsWith(built.runtimeLayer! + path.sep), `uvicorn comes from the runtime layer: ${where[0]}`);
    assert.ok(where[1].startsWith(built.path + path.sep), `six is in the image: ${where[1]}`);
    assert.ok(where[2].startsWith(built.path + path.sep), `the image's h11 wins over the layer's: ${where[2]}`);
    assert.equal(where[3], '99.0.0');
    // The runtime layer is compiled when built; the image once it is in place (later-bytecode.ts):
    // svc runs Python with PYTHONDONTWRITEBYTECODE, so a module without its .pyc would be compiled
    // again by every container. The code names the final folder, not a temporary one.
    assert.match(lines.join('\n'), /the image is ready; its bytecode compiles in the background/);
    await builder.bytecodeSettled();
    assert.ok(existsSync(path.join(built.path, BYTECODE_MARKER)), 'the compile said it finished');
    const compiled = JSON.parse(
      pyOutput(
        built.pythonPath,
        'import json, os, importlib.util, six, uvicorn\n' +
          'print(json.dumps([os.path.exists(importlib.util.cache_from_source(m.__file__)) for m in (six, uvicorn)] + [six.add_metaclass.__code__.co_filename == six.__file__]))',
      ),
    );
    assert.deepEqual(compiled, [true, true, true], 'the image and the runtime layer hold bytecode, naming the final paths');
    assert.notEqual(
      pyOutput(path.join(built.runtimeLayer!, 'bin', 'python'), 'import h11; print(h11.__version__)'),
      '99.0.0',
      'the layer itself is untouched',
    );
    // Text files of the venv name the final folder, not the temporary one it was built in.
    for (const script of readdirSync(path.join(built.path, 'bin')).filter((name) =>
      lstatSync(path.join(built.path, 'bin', name)).isFile(),
    )) {
      const text = readFileSync(path.join(built.path, 'bin', script), 'utf8');
      assert.doesNotMatch(text, /\/\.venv-[0-9a-f]+\./, `bin/${script} still names the temporary folder`);
    }

    const again: string[] = [];
    const cached = await builder.build(spec, (line) => again.push(line));
    assert.deepEqual([cached.cached, cached.path, again], [true, built.path, []]);

    // A svc stopped mid-compile left an image without its marker (and a .pyc short): the next use compiles it again.
    const sixPyc = pyOutput(built.pythonPath, 'import importlib.util, six; print(importlib.util.cache_from_source(six.__file__))');
    rmSync(sixPyc);
    rmSync(path.join(built.path, BYTECODE_MARKER));
    const other = createVenvBuilder({ cacheDir: path.dirname(path.dirname(built.path)), python });
    assert.equal((await other.build(spec, () => {})).cached, true);
    await other.bytecodeSettled();
    assert.ok(existsSync(sixPyc) && existsSync(path.join(built.path, BYTECODE_MARKER)), 'compiled again when next used');

    await assertRuntimeStarts(built);
  });

  it('addresses an image by its Python version, its ordered packages and its runtime layer', async () => {
    const builder = createVenvBuilder({ cacheDir: scratch('svc-cache-'), python });
    const key = (spec: ImageSpec) => builder.keyOf(spec);
    const ab = await key(image('x', ['six', 'idna']));
    assert.equal(await key(image('other-id', ['six', 'idna'])), ab, 'the id does not matter');
    assert.notEqual(await key(image('x', ['idna', 'six'])), ab, 'order matters: later packages may override earlier ones');
    assert.notEqual(await key(image('x', ['six', 'idna'], '3.99')), ab);
    assert.match(ab, /^venv-[0-9a-f]{20}$/);
    const withFile = (content: string): ImageSpec => ({
      ...image('x', ['six', 'idna']),
      requirementsFiles: [{ name: 'requirements.txt', content }],
    });
    const fileKey = await key(withFile('numpy\n'));
    assert.notEqual(fileKey, ab, 'a requirements file is part of the address');
    assert.notEqual(await key(withFile('numpy>=2\n')), fileKey, "and so is the file's content");
    assert.equal(
      await key({ ...image('x'), requirementsFiles: [{ name: 'r.txt', content: 'six\n' }] }).then((k) => k.startsWith('venv-')),
      true,
      'a file alone needs an environment of its own',
    );
    assert.equal(await key(image('x')), path.basename(layer.path), 'no packages: the runtime layer');
    assert.notEqual(await key(image('x', [], '3.99')), path.basename(layer.path));
  });

  it('builds an image once when asked twice at once, and streams the whole log to both waiters', async () => {
    const { cacheDir, images } = cacheWithLayer();
    const builder = createVenvBuilder({ cacheDir, python });
    const first: string[] = [];
    const second: string[] = [];
    let joinLate: () => void = () => {};
    const started = new Promise<void>((resolve) => (joinLate = resolve));
    const a = builder.build(image('img-a', [EXTRA]), (line) => {
      first.push(line);
      joinLate();
    });
    // The second waiter joins once the build is under way: it gets the lines so far, then the rest.
    await started;
    assert.ok(first.length > 0);
    const b = builder.build(image('img-b', [EXTRA]), (line) => second.push(line));
    const [builtA, builtB] = await Promise.all([a, b]);
    assert.equal(builtA.path, builtB.path);
    assert.deepEqual([builtA.imageId, builtB.imageId], ['img-a', 'img-b']);
    assert.equal(count(first, /^ \+ six==/), 1, 'uv ran once');
    assert.deepEqual(second, first, 'both waiters got the whole log');
    assert.equal(readdirSync(images).filter((name) => name.startsWith('venv-')).length, 1);
  });

  it("two svc processes building one image at once both get it, one reusing the other's, and the cache stays whole", async () => {
    const { cacheDir, images } = cacheWithLayer();
    const spec = image('img-race', [EXTRA]);
    const child = buildInChild(cacheDir, spec);
    await child.ready;
    child.go();
    const ours: string[] = [];
    const [mine, theirs] = await Promise.all([
      createVenvBuilder({ cacheDir, python }).build(spec, (line) => ours.push(line)),
      child.result,
    ]);
    assert.equal(theirs.path, mine.path);
    const logs = [ours, child.lines];
    assert.deepEqual(
      logs.map((log) => count(log, /^ \+ six==/)),
      [1, 1],
      'both processes raced through uv',
    );
    assert.equal(
      logs.filter((log) => count(log, /^another svc process built the environment .* using its copy$/) === 1).length,
      1,
      "the loser reused the winner's",
    );
    assert.deepEqual(readdirSync(images).sort(), [path.basename(layer.path), mine.key].sort(), 'no temporary folder left behind');
    assert.equal(pyOutput(mine.pythonPath, 'import six, uvicorn; print("ok")'), 'ok');
  });

  it("fails with the resolver's own explanation for a package that does not exist, keeps nothing half-built and sweeps abandoned builds", async () => {
    const { cacheDir, images } = cacheWithLayer();
    const abandoned = path.join(images, '.venv-0123abcd.999999999.deadbeef');
    mkdirSync(abandoned);
    const lines: string[] = [];
    const missing = 'svc-test-no-such-package-4f1c9';
    await assert.rejects(
      createVenvBuilder({ cacheDir, python }).build(image('img-bad', [missing]), (line) => lines.push(line)),
      (error: unknown) => {
        assert.ok(error instanceof SvcError);
        assert.equal(error.code, 'image_build_failed');
        assert.match(error.message, new RegExp(`^building image img-bad failed: uv pip install ${missing} exited with code 1:`));
        assert.match(error.message, new RegExp(`Because ${missing} was not found in the package registry`));
        assert.match(error.hint ?? '', /add_python_packages/);
        return true;
      },
    );
    assert.ok(count(lines, new RegExp(`Because ${missing} was not found`)) === 1, 'the build log was streamed');
    assert.equal(existsSync(abandoned), false, 'the abandoned build of a dead process was removed');
    assert.deepEqual(readdirSync(images), [path.basename(layer.path)], 'no half-built environment stays behind');
  });

  it('builds with pip, and says so, when uv cannot be had: pip cannot fetch it and no uvPath is set', async () => {
    const { cacheDir, images } = cacheWithLayer({ withUv: false });
    const wheel = fakeWheel('svcfake', '1.0');
    const lines: string[] = [];
    // Only a folder of wheels, no index: pip finds no uv to bring, and finds the image's package.
    const built = await withEnv({ PIP_NO_INDEX: '1', PIP_FIND_LINKS: path.dirname(wheel) }, () =>
      createVenvBuilder({ cacheDir, python }).build(image('img-pip', ['svcfake==1.0']), (line) => lines.push(line)),
    );
    assert.equal(count(lines, /^uv is not available \(pip could not bring uv [\d.]+: .*\): installing with pip$/), 1, lines.join('\n'));
    assert.equal(count(lines, /^Successfully installed svcfake-1\.0$/), 1, lines.join('\n'));
    assert.equal(existsSync(path.join(cacheDir, 'tools', `uv-${UV_VERSION}`)), false, 'no half-brought uv stays behind');
    assert.equal(pyOutput(built.pythonPath, 'import svcfake, uvicorn; print(svcfake.__version__)'), '1.0');
    assert.ok(readdirSync(images).includes(built.key));
  });

  it('builds with pip when imageInstaller is pip (its bytecode with the build when imageBytecode is build), and refuses to fall back when it is uv and uvPath is no uv', async () => {
    const { cacheDir } = cacheWithLayer();
    const lines: string[] = [];
    const built = await createVenvBuilder({ cacheDir, python, installer: 'pip', bytecode: 'build' }).build(
      image('img-pip-asked', [EXTRA]),
      (line) => lines.push(line),
    );
    assert.deepEqual(
      [count(lines, /^installing with pip \(imageInstaller is pip\)$/), count(lines, /^Successfully installed six-/)],
      [1, 1],
    );
    assert.doesNotMatch(lines.join('\n'), /compiles in the background/);
    // Nothing compiles after the build returned: the .pyc and the marker are there at once.
    assert.equal(
      pyOutput(built.pythonPath, 'import importlib.util, os, six; print(os.path.exists(importlib.util.cache_from_source(six.__file__)))'),
      'True',
    );
    assert.ok(existsSync(path.join(built.path, BYTECODE_MARKER)));

    const notUv = path.join(scratch('svc-not-uv-'), 'uv');
    writeFileSync(notUv, '#!/bin/sh\necho "not uv"\n', { mode: 0o755 });
    await assert.rejects(
      createVenvBuilder({ cacheDir, python, installer: 'uv', uvPath: notUv }).build(image('img-uv-only', ['idna']), () => {}),
      (error: unknown) => {
        assert.ok(error instanceof SvcError);
        assert.equal(error.code, 'image_build_failed');
        assert.match(error.message, /uv is not available: .*--version said "not uv", not a uv version/);
        assert.match(error.hint ?? '', /uvPath \(SVC_UV\)/);
        return true;
      },
    );
  });

  it('answers python_unavailable, listing the versions this machine has, for a Python version that is not installed', async () => {
    const cacheDir = scratch('svc-cache-');
    const builder = createVenvBuilder({ cacheDir, python });
    for (const packages of [[], [EXTRA]]) {
      await assert.rejects(
        builder.build(image('img-x', packages, '3.99'), () => {}),
        (error: unknown) => {
          assert.ok(error instanceof SvcError);
          assert.equal(error.code, 'python_unavailable');
          assert.match(error.message, /^Python 3\.99 is not installed on this machine \(found (\d+\.\d+)(, \d+\.\d+)*\)\.$/);
          assert.match(error.message, new RegExp(`[ (]${version.replace('.', '\\.')}[,)]`), `the machine's ${version} is listed`);
          assert.ok((error.details as { found: string[] }).found.includes(version));
          assert.match(error.hint ?? '', /Image\(python_version="\d+\.\d+"\)/);
          return true;
        },
      );
    }
    assert.equal(existsSync(path.join(cacheDir, 'images')), false, 'nothing was written');
  });
});

/** Runs `work` with these variables set in this process (its builds read them), then puts them back. */
async function withEnv<T>(vars: Record<string, string>, work: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
  Object.assign(process.env, vars);
  try {
    return await work();
  } finally {
    for (const [name, value] of Object.entries(before)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/**
 * A wheel built by hand for a package of the runtime layer, with a version
 * no index has: proves that an image's packages win over the layer's
 * without depending on what the index holds.
 */
function fakeWheel(name: string, version: string): string {
  const dir = scratch('svc-wheel-');
  const script = `
import base64, hashlib, sys, zipfile
out, name, version = sys.argv[1:4]
info = f"{name}-{version}.dist-info"
files = {
    f"{name}/__init__.py": f"__version__ = {version!r}\\n",
    f"{info}/METADATA": f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n",
    f"{info}/WHEEL": "Wheel-Version: 1.0\\nGenerator: svc-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
}
path = f"{out}/{name}-{version}-py3-none-any.whl"
record = []
with zipfile.ZipFile(path, "w") as wheel:
    for member, text in files.items():
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        wheel.writestr(member, data)
        record.append(f"{member},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    wheel.writestr(f"{info}/RECORD", "\\n".join(record) + "\\n")
print(path)
`;
  return execFileSync(python, ['-c', script, dir, name, version], { encoding: 'utf8' }).trim();
}

/**
 * Starts the container runtime from the image, serving an app that imports
 * the image's packages at import time and checks the image's h11 won: the
 * runtime binds its socket only after the import, so a health answer proves it.
 */
async function assertRuntimeStarts(built: BuiltImage): Promise<void> {
  const root = scratch('svc-app-');
  writeFileSync(
    path.join(root, 'app.py'),
    [
      'import h11, six, svc',
      'assert h11.__version__ == "99.0.0", h11.__file__',
      'app = svc.App("layered")',
      '@app.endpoint(route="/", methods=["GET"], authorized=False)',
      'def versions() -> dict:',
      '    return {"h11": h11.__version__, "six": six.__version__}',
      '',
    ].join('\n'),
  );
  const socketPath = path.join(root, 'r.sock');
  const output: string[] = [];
  const group = spawnGroup({
    command: built.pythonPath,
    args: ['-m', 'svc.runtime', '--root', root, '--entry', 'app', '--workload', 'versions', '--socket', socketPath],
    cwd: root,
    env: { ...process.env, PYTHONPATH: sdkPythonPath, PYTHONDONTWRITEBYTECODE: '1' },
    onLine: (_stream, line) => output.push(line),
  });
  try {
    const deadline = Date.now() + 30_000;
    while (!(await probeHealth(socketPath))) {
      if (group.hasExited() || Date.now() > deadline) assert.fail(`the runtime did not start from the image:\n${output.join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await group.stop(2_000);
  }
}

/** Builds `spec` in another Node process once told to go; its log lines and result come back as JSON lines. */
function buildInChild(cacheDir: string, spec: ImageSpec) {
  const builderUrl = new URL('../../../../core/infra/images/venv-builder.js', import.meta.url).href;
  const script = `
import { createInterface } from 'node:readline';
const { createVenvBuilder } = await import(process.argv[1]);
const [cacheDir, python, spec] = [process.argv[2], process.argv[3], JSON.parse(process.argv[4])];
const say = (value) => process.stdout.write(JSON.stringify(value) + '\\n');
const input = createInterface({ input: process.stdin });
say({ ready: true });
await new Promise((resolve) => input.once('line', resolve));
input.close();
try {
  say({ result: await createVenvBuilder({ cacheDir, python }).build(spec, (line) => say({ line })) });
} catch (error) {
  say({ error: String(error && error.message) });
}
`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, builderUrl, cacheDir, python, JSON.stringify(spec)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const result = new Promise<BuiltImage>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (text) => {
      const message = JSON.parse(text) as { ready?: true; line?: string; result?: BuiltImage; error?: string };
      if (message.ready) markReady();
      if (message.line !== undefined) lines.push(message.line);
      if (message.result) resolve(message.result);
      if (message.error) reject(new Error(`the other process failed: ${message.error}`));
    });
    child.on('exit', (code) => reject(new Error(`the other process exited with ${code}`)));
  });
  return { ready, lines, result, go: () => child.stdin.end('go\n') };
}
