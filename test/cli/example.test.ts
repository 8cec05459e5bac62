import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { exampleDownload, exampleList } from '../../cli/commands/example.js';
import { examplesRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { tarArchive, type TarEntry } from '../fixtures/tar-writer.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { capture, rejectsWith } from './fixture.js';

/** Every file under `dir`, relative, with its content (folders are implied). */
function filesOf(dir: string, prefix = ''): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) Object.assign(files, filesOf(dir, relative));
    else files[relative] = readFileSync(path.join(dir, relative), 'utf8');
  }
  return files;
}

const file = (name: string, content: string): TarEntry => ({ type: 'file', name, content });
const tarGz = async (...entries: TarEntry[]) => gzipSync(await tarArchive(entries));

describe('svc example list | download (in process, against a real server)', function () {
  this.timeout(60_000);
  let platform: Platform;
  let env: Record<string, string>;
  const reports: unknown[] = [];

  before(async () => {
    platform = await startPlatform({ config: testConfig(), report: (error) => reports.push(error) });
    env = { SVC_SERVER: platform.url, SVC_TOKEN: platform.ownerToken.secret };
  });
  after(async () => platform?.close());
  afterEach(() => assert.deepEqual(reports, [], 'no unexpected errors'));

  it('list prints every example with its description, and --json the API answer', async () => {
    const run = capture({ env });
    const examples = await exampleList(run.context);
    assert.ok(examples.length >= 5);
    const lines = run.stdout().trimEnd().split('\n');
    assert.match(lines[0]!, /^NAME\s+DESCRIPTION$/);
    for (const example of examples)
      assert.ok(
        lines.some((line) => line.startsWith(`${example.name}  `) && line.endsWith(example.description)),
        example.name,
      );
    assert.match(run.stderr(), /svc example download <name>/);

    const json = capture({ env });
    await exampleList(json.context, { json: true });
    assert.deepEqual(JSON.parse(json.stdout()), { examples });
  });

  it("download writes the example's files into ./<name> and prints the next steps", async () => {
    const cwd = tempDir('svc-example-cwd-');
    const run = capture({ env, cwd });
    const result = await exampleDownload(run.context, 'checkpointed-model');
    const dest = path.join(cwd, 'checkpointed-model');
    assert.equal(result.dir, dest);
    assert.deepEqual(filesOf(dest), filesOf(path.join(examplesRoot, 'checkpointed-model')));
    assert.deepEqual(result.files, Object.keys(filesOf(dest)).sort());
    assert.match(run.stdout(), /^ {2}cd checkpointed-model && svc serve app\.py$/m);
    assert.match(run.stderr(), /example checkpointed-model: 2 files/);
    assert.deepEqual(readdirSync(cwd), ['checkpointed-model'], 'nothing else is left in the folder');
  });

  it('download --dir writes into that folder (created, or empty), with paths relative to cwd', async () => {
    const cwd = tempDir('svc-example-cwd-');
    const run = capture({ env, cwd });
    await exampleDownload(run.context, 'autoscaling', { dir: 'nested/here' });
    assert.deepEqual(filesOf(path.join(cwd, 'nested', 'here')), filesOf(path.join(examplesRoot, 'autoscaling')));
    assert.match(run.stdout(), /cd nested\/here && svc serve app\.py/);

    mkdirSync(path.join(cwd, 'empty'));
    const json = capture({ env, cwd });
    const result = await exampleDownload(json.context, 'quickstart', { dir: 'empty', json: true });
    assert.deepEqual(JSON.parse(json.stdout()), {
      name: 'quickstart',
      dir: path.join(cwd, 'empty'),
      files: ['README.md', 'app.py', 'call_remote.py'],
    });
    assert.deepEqual(result.files, ['README.md', 'app.py', 'call_remote.py']);

    const spaced = capture({ env, cwd });
    await exampleDownload(spaced.context, 'quickstart', { dir: "my app's" });
    assert.match(spaced.stdout(), /cd 'my app'\\''s' && svc serve app\.py/, 'a folder name the shell would split is quoted');
  });

  it('refuses an existing folder that is not empty, and writes nothing; --force writes the files into it', async () => {
    const cwd = tempDir('svc-example-cwd-');
    const dest = path.join(cwd, 'quickstart');
    mkdirSync(dest);
    writeFileSync(path.join(dest, 'app.py'), 'mine');
    writeFileSync(path.join(dest, 'notes.txt'), 'keep me');
    const error = await rejectsWith(exampleDownload(capture({ env, cwd }).context, 'quickstart'));
    assert.equal(error.code, 'conflict');
    assert.equal(error.message, `${dest} already exists and is not empty; svc example download writes into a new folder.`);
    assert.match(error.hint ?? '', /--dir.*--force/);
    assert.deepEqual(filesOf(dest), { 'app.py': 'mine', 'notes.txt': 'keep me' });

    await exampleDownload(capture({ env, cwd }).context, 'quickstart', { force: true });
    assert.deepEqual(filesOf(dest), { ...filesOf(path.join(examplesRoot, 'quickstart')), 'notes.txt': 'keep me' });
    assert.deepEqual(readdirSync(cwd), ['quickstart'], 'no staging folder left behind');
  });

  it('refuses a file or a link where the folder would go', async () => {
    const cwd = tempDir('svc-example-cwd-');
    writeFileSync(path.join(cwd, 'quickstart'), 'a file');
    assert.equal((await rejectsWith(exampleDownload(capture({ env, cwd }).context, 'quickstart'))).code, 'conflict');
    symlinkSync(tempDir('svc-elsewhere-'), path.join(cwd, 'linked'));
    assert.equal(
      (await rejectsWith(exampleDownload(capture({ env, cwd }).context, 'quickstart', { dir: 'linked', force: true }))).code,
      'conflict',
    );
  });

  it('--force never writes through a link inside the folder', async () => {
    const cwd = tempDir('svc-example-cwd-');
    const outside = tempDir('svc-outside-');
    const dest = path.join(cwd, 'quickstart');
    mkdirSync(dest);
    symlinkSync(path.join(outside, 'app.py'), path.join(dest, 'app.py')); // a dangling link: rename replaces the link itself
    await exampleDownload(capture({ env, cwd }).context, 'quickstart', { force: true });
    assert.ok(!lstatSync(path.join(dest, 'app.py')).isSymbolicLink());
    assert.ok(!existsSync(path.join(outside, 'app.py')), 'nothing was written outside');
  });

  it('checks the name before anything else: a name that is not plain never becomes a path', async () => {
    const cwd = tempDir('svc-example-cwd-');
    for (const name of ['../evil', '/tmp/x', 'Quickstart', 'a/b', '']) {
      const error = await rejectsWith(exampleDownload(capture({ env, cwd }).context, name));
      assert.equal(error.code, 'name_invalid', name);
    }
    assert.deepEqual(readdirSync(cwd), []);
  });

  it("passes the server's 404 on, listing the examples, and writes nothing", async () => {
    const cwd = tempDir('svc-example-cwd-');
    const error = await rejectsWith(exampleDownload(capture({ env, cwd }).context, 'nope'));
    assert.equal(error.code, 'not_found');
    assert.match(error.message, /there is no example "nope"; the examples are: .*quickstart/);
    assert.deepEqual(readdirSync(cwd), []);
  });

  it('needs a token', async () => {
    const error = await rejectsWith(exampleList(capture({ env: { SVC_SERVER: platform.url } }).context));
    assert.equal(error.code, 'not_signed_in');
    const refused = await rejectsWith(exampleList(capture({ env: { ...env, SVC_TOKEN: 'svc_not-a-real-token' } }).context));
    assert.equal(refused.code, 'unauthorized');
  });
});

describe('svc example download: archives it refuses', function () {
  this.timeout(30_000);
  let server: http.Server;
  let archive: Buffer = Buffer.alloc(0);
  let type = 'application/gzip';
  let env: Record<string, string>;

  before(async () => {
    server = http.createServer((_request, response) => {
      response.writeHead(200, { 'Content-Type': type, 'Content-Length': archive.length });
      response.end(archive);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    env = { SVC_SERVER: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, SVC_TOKEN: 'svc_test' };
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  async function refused(entries: Buffer, rule: RegExp): Promise<void> {
    archive = entries;
    const cwd = tempDir('svc-example-cwd-');
    const error = await rejectsWith(exampleDownload(capture({ env, cwd }).context, 'evil'));
    assert.equal(error.code, 'bundle_invalid', error.message);
    assert.match(error.message, rule);
    assert.deepEqual(readdirSync(cwd), [], 'nothing was written');
  }

  it('a symbolic link, even one that stays inside', async () => {
    await refused(
      await tarGz(file('app.py', 'x'), { type: 'symlink', name: 'link.py', target: 'app.py' }),
      /"link\.py" is a symbolic link/,
    );
  });

  it('a hard link', async () => {
    await refused(await tarGz(file('app.py', 'x'), { type: 'hardlink', name: 'hard.py', target: 'app.py' }), /"hard\.py" is a hard link/);
  });

  it('an absolute path and a ".." component', async () => {
    await refused(await tarGz(file('/etc/evil', 'x')), /absolute path/);
    await refused(await tarGz(file('../evil.py', 'x')), /"\.\." component/);
    await refused(await tarGz(file('ok/../../evil.py', 'x')), /"\.\." component/);
  });

  it('a damaged archive and an answer that is not gzip', async () => {
    await refused(Buffer.from('not gzip at all'), /damaged/);
    archive = Buffer.from('<html>');
    type = 'text/html';
    const error = await rejectsWith(exampleDownload(capture({ env, cwd: tempDir('svc-example-cwd-') }).context, 'evil'));
    assert.equal(error.code, 'unexpected_response');
    type = 'application/gzip';
  });

  it('accepts a plain archive of files and folders', async () => {
    archive = await tarGz({ type: 'dir', name: 'pkg/' }, file('pkg/mod.py', 'print(1)\n'), file('app.py', 'import pkg\n'));
    const cwd = tempDir('svc-example-cwd-');
    const result = await exampleDownload(capture({ env, cwd }).context, 'plain');
    assert.deepEqual(result.files, ['app.py', 'pkg/mod.py']);
    assert.deepEqual(filesOf(path.join(cwd, 'plain')), { 'app.py': 'import pkg\n', 'pkg/mod.py': 'print(1)\n' });
  });
});
