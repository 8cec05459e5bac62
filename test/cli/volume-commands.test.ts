import assert from 'node:assert/strict';
import type { StdioOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { volumeCreate, volumeDelete, volumeGet, volumeList, volumeLs, volumePut, volumeRm } from '../../cli/commands/volume.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { packageRoot } from '../../core/model/paths.js';
import { testConfig, tempDir } from '../helpers/config.js';
import { runChild } from '../helpers/run-child.js';
import { capture, rejectsWith } from './fixture.js';

const CLI = path.join(packageRoot, 'dist', 'cli', 'index.js');

/**
 * `svc volume create | list | delete | ls | put | get | rm`, run in-process against a real platform
 * over real HTTP: a folder up and back down byte for byte (files streamed from and to disk), listings
 * as tables and JSON, removal, and the server's refusals as the CLI's errors.
 */
describe('CLI volume commands against a real server', function () {
  this.timeout(60_000);
  let platform: Platform;
  let env: Record<string, string>;
  let work: string;

  before(async () => {
    platform = await startPlatform({ config: testConfig() });
    env = { SVC_SERVER: platform.url, SVC_TOKEN: platform.ownerToken.secret };
    work = tempDir('svc-volume-cli-');
    mkdirSync(path.join(work, 'weights', 'layers'), { recursive: true });
    writeFileSync(path.join(work, 'weights', 'big.bin'), randomBytes(5 * 1024 * 1024));
    writeFileSync(path.join(work, 'weights', 'layers', 'one.txt'), 'one');
    // What a cut-off `svc volume get` left in the folder: not files of its own, so never put.
    writeFileSync(path.join(work, 'weights', 'layers', 'two.txt.svc-partial'), 'tw');
    writeFileSync(path.join(work, 'weights', 'layers', 'two.txt.svc-partial.parts'), '{}');
    writeFileSync(path.join(work, 'single.txt'), 'single');
  });
  after(async () => platform?.close());

  it('creates a volume and lists it, as a table and as JSON', async () => {
    const made = capture({ env });
    await volumeCreate(made.context, 'models');
    assert.match(made.stderr(), /created the volume models; put files in with svc volume put models <local path>/);
    const table = capture({ env });
    await volumeList(table.context);
    assert.match(table.stdout(), /^NAME +SIZE +LIMIT +MOUNTED BY +CREATED\nmodels +0 B +of 50 GiB +- /);
    const json = capture({ env });
    await volumeList(json.context, { json: true });
    assert.deepEqual(
      JSON.parse(json.stdout()).volumes.map((v: { name: string }) => v.name),
      ['models'],
    );
  });

  it('puts a folder and a file, lists them, and gets both back byte for byte', async () => {
    const put = capture({ env, cwd: work });
    await volumePut(put.context, 'models', 'weights', undefined);
    assert.match(put.stderr(), /put weights\/big\.bin \(5 MiB\)/);
    assert.match(put.stderr(), /put 2 files into models:weights/);
    await volumePut(capture({ env, cwd: work }).context, 'models', 'single.txt', '/docs/readme.txt');
    const ls = capture({ env });
    await volumeLs(ls.context, 'models', undefined, { recursive: true });
    const paths = ls
      .stdout()
      .split('\n')
      .slice(1)
      .map((line) => line.split(/ +/)[0])
      .filter(Boolean);
    assert.deepEqual(paths, ['docs/', 'docs/readme.txt', 'weights/', 'weights/big.bin', 'weights/layers/', 'weights/layers/one.txt']);

    const back = tempDir('svc-volume-back-');
    await volumeGet(capture({ env, cwd: back }).context, 'models', 'weights', undefined);
    assert.ok(readFileSync(path.join(back, 'weights', 'big.bin')).equals(readFileSync(path.join(work, 'weights', 'big.bin'))));
    assert.equal(readFileSync(path.join(back, 'weights', 'layers', 'one.txt'), 'utf8'), 'one');
    await volumeGet(capture({ env, cwd: back }).context, 'models', 'docs/readme.txt', 'copy.txt');
    assert.equal(readFileSync(path.join(back, 'copy.txt'), 'utf8'), 'single');
    await volumeGet(capture({ env, cwd: back }).context, 'models', 'docs/readme.txt', 'weights');
    assert.equal(readFileSync(path.join(back, 'weights', 'readme.txt'), 'utf8'), 'single', 'into an existing folder, as cp');
    assert.deepEqual(
      readdirSync(back, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.svc-partial')),
      [],
    );
  });

  it("puts and gets a file into a folder named with a trailing /, and gets a file to standard output with -, as Modal's CLI", async () => {
    await volumePut(capture({ env, cwd: work }).context, 'models', 'single.txt', 'notes/');
    const listed = capture({ env });
    await volumeLs(listed.context, 'models', 'notes', { json: true });
    assert.deepEqual(
      JSON.parse(listed.stdout()).entries.map((e: { path: string }) => e.path),
      ['notes/single.txt'],
    );
    const into = tempDir('svc-volume-into-');
    await volumeGet(capture({ env, cwd: into }).context, 'models', 'notes/single.txt', 'new-folder/');
    assert.equal(
      readFileSync(path.join(into, 'new-folder', 'single.txt'), 'utf8'),
      'single',
      'into a folder named with a trailing /, made',
    );
    writeFileSync(path.join(into, 'a-file'), 'x');
    const onFile = await rejectsWith(volumeGet(capture({ env, cwd: into }).context, 'models', 'notes', 'a-file'));
    assert.deepEqual(
      [onFile.code, readFileSync(path.join(into, 'a-file'), 'utf8')],
      ['usage_invalid', 'x'],
      "a folder's files onto a file",
    );
    const got = capture({ env, cwd: work });
    await volumeGet(got.context, 'models', 'weights/big.bin', '-');
    assert.ok(got.stdoutBytes().equals(readFileSync(path.join(work, 'weights', 'big.bin'))), 'the bytes, whole');
    assert.equal(got.stderr(), '', 'nothing said beside them');
    assert.ok(!readdirSync(work).some((name) => name.includes('svc-partial') || name === 'big.bin' || name === '-'), 'nothing written');
    assert.equal((await rejectsWith(volumeGet(capture({ env }).context, 'models', 'weights', '-'))).code, 'usage_invalid');
    assert.equal(
      (await rejectsWith(volumeGet(capture({ env }).context, 'models', 'notes/single.txt', '-', { json: true }))).code,
      'usage_invalid',
    );
    const root = await rejectsWith(volumeRm(capture({ env }).context, 'models', '/'));
    assert.deepEqual(
      [root.code, root.message, root.hint],
      ['bad_request', "a volume's root cannot be removed.", 'Delete the volume itself: svc volume delete models.'],
    );

    // The real command line: the parser drops a lone "-" unless svc keeps it; a reader that stops early ends it quietly.
    const cliEnv = { ...process.env, ...env, SVC_CONFIG_DIR: tempDir('svc-config-') };
    // Run without blocking this process: the server answering them runs in it.
    const pipes = { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] as StdioOptions, env: cliEnv };
    const cli = await runChild(process.execPath, [CLI, 'volume', 'get', 'models', 'notes/single.txt', '-'], pipes);
    assert.deepEqual([cli.code, cli.stdout, cli.stderr], [0, 'single', '']);
    const head = await runChild(
      'sh',
      ['-c', `"${process.execPath}" "${CLI}" volume get models weights/big.bin - | head -c 10 | wc -c`],
      pipes,
    );
    assert.deepEqual([head.code, head.stdout, head.stderr], [0, '10\n', '']);
    await volumeRm(capture({ env }).context, 'models', 'notes', { recursive: true });
  });

  it('lists and gets a folder of more entries than a page of a listing holds', async () => {
    await volumeCreate(capture({ env }).context, 'wide');
    // Written where the volume keeps them, as a container would: 10 000 empty folders between files, so that
    // the listings run past a page of 10 000 entries while the get fetches only the files.
    const rows = path.join(platform.config.dataDir, 'volumes', 'default', 'wide', 'rows');
    for (let i = 0; i < 10_000; i++) mkdirSync(path.join(rows, 'all', `d${String(i).padStart(5, '0')}`), { recursive: true });
    writeFileSync(path.join(rows, 'all', 'a-first.txt'), 'before the crowd');
    writeFileSync(path.join(rows, 'all', 'zz-last.txt'), 'after the crowd');
    writeFileSync(path.join(rows, 'zz.txt'), 'after the folder');
    const listed = capture({ env });
    await volumeLs(listed.context, 'wide', 'rows/all', { json: true });
    const entries = JSON.parse(listed.stdout()).entries as { path: string }[];
    assert.equal(entries.length, 10_002);
    assert.deepEqual(
      [entries[0]!.path, entries[1]!.path, entries.at(-1)!.path],
      ['rows/all/a-first.txt', 'rows/all/d00000', 'rows/all/zz-last.txt'],
    );
    const back = tempDir('svc-volume-wide-');
    const got = capture({ env, cwd: back });
    await volumeGet(got.context, 'wide', 'rows', undefined, { json: true });
    assert.deepEqual(JSON.parse(got.stdout()).files, [
      path.join(back, 'rows', 'all', 'a-first.txt'),
      path.join(back, 'rows', 'all', 'zz-last.txt'),
      path.join(back, 'rows', 'zz.txt'),
    ]);
    assert.equal(readFileSync(path.join(back, 'rows', 'zz.txt'), 'utf8'), 'after the folder', 'the files past the first page too');
  });

  it('removes a file and a folder, refuses what the server refuses, and deletes the volume with --yes', async () => {
    await volumeRm(capture({ env }).context, 'models', 'docs/readme.txt');
    const folder = await rejectsWith(volumeRm(capture({ env }).context, 'models', 'weights'));
    assert.equal(folder.code, 'bad_request');
    await volumeRm(capture({ env }).context, 'models', 'weights', { recursive: true });
    const json = capture({ env });
    await volumeLs(json.context, 'models', undefined, { json: true });
    assert.deepEqual(
      JSON.parse(json.stdout()).entries.map((e: { path: string }) => e.path),
      ['docs'],
    );
    assert.equal((await rejectsWith(volumeLs(capture({ env }).context, 'models', '../up'))).code, 'bad_request');
    assert.equal((await rejectsWith(volumeLs(capture({ env }).context, 'nothing', undefined))).code, 'not_found');
    assert.equal(
      (await rejectsWith(volumePut(capture({ env, cwd: work }).context, 'models', 'absent.bin', undefined))).code,
      'usage_invalid',
    );
    await volumeDelete(capture({ env }).context, 'models', { yes: true });
    assert.equal((await rejectsWith(volumeLs(capture({ env }).context, 'models', undefined))).code, 'not_found');
  });
});
