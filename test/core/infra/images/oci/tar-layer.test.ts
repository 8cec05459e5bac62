import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  lstatSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { writeLayer } from '../../../../../core/infra/images/oci/tar-layer.js';
import { tempDir } from '../../../../helpers/config.js';

const scratchDirs: string[] = [];
function scratch(prefix = 'svc-tar-'): string {
  const dir = tempDir(prefix);
  scratchDirs.push(dir);
  return dir;
}

const LONG_DIR = `${'d'.repeat(60)}/${'e'.repeat(60)}`;
const LONG_FILE = `${'f'.repeat(70)}.txt`;
const UNICODE = 'grüße-日本.txt';

/** A folder with a plain file, an executable, a nested folder, a long path, a non-ASCII name and symlinks. */
function sample(): string {
  const dir = scratch('svc-tar-src-');
  writeFileSync(path.join(dir, 'hello.txt'), 'hello\n');
  writeFileSync(path.join(dir, 'run.sh'), '#!/bin/sh\necho run\n');
  chmodSync(path.join(dir, 'run.sh'), 0o700);
  writeFileSync(path.join(dir, 'secret.txt'), 'private\n');
  chmodSync(path.join(dir, 'secret.txt'), 0o600);
  mkdirSync(path.join(dir, 'pkg', 'sub'), { recursive: true });
  writeFileSync(path.join(dir, 'pkg', '__init__.py'), 'X = 1\n');
  writeFileSync(path.join(dir, 'pkg', 'sub', 'big.bin'), Buffer.alloc(70_000, 7));
  mkdirSync(path.join(dir, 'empty'));
  mkdirSync(path.join(dir, LONG_DIR), { recursive: true });
  writeFileSync(path.join(dir, LONG_DIR, LONG_FILE), 'long\n');
  writeFileSync(path.join(dir, UNICODE), 'unicode\n');
  symlinkSync('pkg/__init__.py', path.join(dir, 'link.py'));
  symlinkSync(`${'t'.repeat(150)}/target`, path.join(dir, 'long-link'));
  return dir;
}

function sha256File(bytes: Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

describe('writeLayer(): reproducible tar.gz layers', () => {
  let source: string;
  let out: string;

  before(() => {
    source = sample();
    out = scratch('svc-tar-out-');
  });
  after(() => {
    for (const dir of scratchDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('gives the same digest and diffId for the same folder twice, and for a copy with other times and modes', async () => {
    const first = await writeLayer(source, '/opt/svc/runtime', path.join(out, 'a.tar.gz'));
    const second = await writeLayer(source, '/opt/svc/runtime', path.join(out, 'b.tar.gz'));
    assert.equal(first.digest, second.digest);
    assert.equal(first.diffId, second.diffId);
    assert.equal(first.size, statSync(first.file).size);
    assert.match(first.digest, /^sha256:[0-9a-f]{64}$/);
    assert.notEqual(first.digest, first.diffId);
    assert.deepEqual(readFileSync(first.file), readFileSync(second.file));

    const copy = path.join(scratch('svc-tar-copy-'), 'elsewhere');
    cpSync(source, copy, { recursive: true, verbatimSymlinks: true });
    utimesSync(path.join(copy, 'hello.txt'), 1_000_000, 1_000_000);
    utimesSync(path.join(copy, 'pkg'), 2_000_000, 2_000_000);
    chmodSync(path.join(copy, 'secret.txt'), 0o640);
    const third = await writeLayer(copy, '/opt/svc/runtime', path.join(out, 'c.tar.gz'));
    assert.equal(third.digest, first.digest, "mtimes, group bits and the folder's own path do not change the layer");

    writeFileSync(path.join(copy, 'hello.txt'), 'changed\n');
    const fourth = await writeLayer(copy, '/opt/svc/runtime', path.join(out, 'd.tar.gz'));
    assert.notEqual(fourth.digest, first.digest, 'content does');
    const elsewhere = await writeLayer(source, '/opt/svc/packages', path.join(out, 'e.tar.gz'));
    assert.notEqual(elsewhere.digest, first.digest, 'and so does where it unpacks');
  });

  it('the diffId is the sha256 of the gunzipped tar, and the digest that of the file', async () => {
    const layer = await writeLayer(source, '/opt/svc/runtime', path.join(out, 'diff.tar.gz'));
    const tar = execFileSync('gzip', ['-dc', layer.file], { maxBuffer: 64 << 20 });
    assert.equal(layer.diffId, sha256File(tar));
    assert.equal(layer.digest, sha256File(readFileSync(layer.file)));
    assert.equal(tar.length % 512, 0, 'whole tar blocks');
  });

  it('GNU tar lists every entry owned by root with mtime 0, parents first, modes reduced to 755/644', async () => {
    const layer = await writeLayer(source, '/opt/svc/runtime', path.join(out, 'list.tar.gz'));
    const listing = execFileSync('tar', ['--numeric-owner', '-tvzf', layer.file], {
      encoding: 'utf8',
      env: { ...process.env, TZ: 'UTC', LC_ALL: 'C.UTF-8' },
    });
    const lines = listing.trim().split('\n');
    for (const line of lines) {
      assert.match(line, /^\S+ 0\/0 +\d+ 1970-01-01 00:00 /, line);
    }
    const named = execFileSync('tar', ['-tvzf', layer.file], { encoding: 'utf8', env: { ...process.env, TZ: 'UTC' } });
    for (const line of named.trim().split('\n')) assert.match(line, /^\S+ root\/root /, line);
    const names = execFileSync('tar', ['-tzf', layer.file], { encoding: 'utf8' }).trim().split('\n');
    assert.deepEqual(names.slice(0, 3), ['opt/', 'opt/svc/', 'opt/svc/runtime/']);
    assert.ok(names.includes('opt/svc/runtime/empty/'), 'empty folders are kept');
    const modeOf = (name: string) =>
      lines.find((line) => line.endsWith(` opt/svc/runtime/${name}`) || line.includes(` opt/svc/runtime/${name} -> `))!.split(' ')[0];
    assert.equal(modeOf('run.sh'), '-rwxr-xr-x');
    assert.equal(modeOf('secret.txt'), '-rw-r--r--');
    assert.equal(modeOf('hello.txt'), '-rw-r--r--');
    assert.equal(modeOf('pkg/'), 'drwxr-xr-x');
    assert.equal(modeOf('link.py'), 'lrwxrwxrwx');
  });

  it('round-trips a path over 100 bytes, a non-ASCII name, symlinks and file contents through tar -xzf (pax records)', async () => {
    const layer = await writeLayer(source, '/opt/svc/runtime', path.join(out, 'x.tar.gz'));
    assert.ok(Buffer.byteLength(`opt/svc/runtime/${LONG_DIR}/${LONG_FILE}`) > 100);
    const into = scratch('svc-tar-x-');
    execFileSync('tar', ['-xzf', layer.file, '-C', into], { env: { ...process.env, LC_ALL: 'C.UTF-8' } });
    const root = path.join(into, 'opt', 'svc', 'runtime');
    assert.equal(readFileSync(path.join(root, LONG_DIR, LONG_FILE), 'utf8'), 'long\n');
    assert.equal(readFileSync(path.join(root, UNICODE), 'utf8'), 'unicode\n');
    assert.ok(lstatSync(path.join(root, 'link.py')).isSymbolicLink(), 'a symlink stays a symlink');
    assert.equal(readlinkSync(path.join(root, 'link.py')), 'pkg/__init__.py');
    assert.equal(readFileSync(path.join(root, 'link.py'), 'utf8'), 'X = 1\n');
    assert.equal(readlinkSync(path.join(root, 'long-link')), `${'t'.repeat(150)}/target`, 'a long link target goes in a pax linkpath');
    assert.deepEqual(readFileSync(path.join(root, 'pkg', 'sub', 'big.bin')), Buffer.alloc(70_000, 7));
    assert.equal(readFileSync(path.join(root, 'hello.txt'), 'utf8'), 'hello\n');
    assert.equal(statSync(path.join(root, 'run.sh')).mode & 0o111, 0o111);
  });

  it('leaves out what is neither file, folder nor symlink (a socket)', async () => {
    const dir = scratch('svc-tar-sock-');
    writeFileSync(path.join(dir, 'a.txt'), 'a');
    const net = await import('node:net');
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(path.join(dir, 's.sock'), resolve));
    try {
      const layer = await writeLayer(dir, 'x', path.join(out, 'sock.tar.gz'));
      const names = execFileSync('tar', ['-tzf', layer.file], { encoding: 'utf8' }).trim().split('\n');
      assert.deepEqual(names, ['x/', 'x/a.txt']);
    } finally {
      server.close();
    }
  });
});
