import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { serverBackup, serverRestore } from '../../cli/commands/server-backup.js';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { capture } from '../cli/fixture.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { mountTmpfs } from '../helpers/tmpfs.js';
import { upload } from './api-lifecycle-helpers.js';
import { bundleOfFolder } from './run-helpers.js';

const folder = path.join(packageRoot, 'test', 'fixtures', 'secrets');

/** A gzipped tar of these entries, as a hostile or damaged backup would be. */
async function archive(entries: { name: string; body: string | Buffer; type?: 'file' | 'symlink'; linkname?: string }[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (chunk: unknown) => chunks.push(chunk as Buffer));
  const ended = new Promise<void>((resolve) => pack.on('end', () => resolve()));
  for (const entry of entries) {
    const body = Buffer.from(entry.body);
    await new Promise<void>((resolve, reject) =>
      pack.entry(
        { name: entry.name, size: entry.type === 'symlink' ? 0 : body.length, type: entry.type ?? 'file', linkname: entry.linkname },
        entry.type === 'symlink' ? Buffer.alloc(0) : body,
        (error) => (error ? reject(error) : resolve()),
      ),
    );
  }
  pack.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks));
}

/**
 * `svc server backup` of a running embedded server and `svc server restore` into an empty data dir,
 * with real workers: the app, a token made through the API and the secrets (named and inline) are
 * all back on a server started on the restored folder. Restores that must not happen (a folder with
 * state, names svc never writes, a link, a newer format, a cut-short archive) are refused and leave
 * no store behind.
 */
describe('svc server backup and restore (embedded platform)', function () {
  this.timeout(300_000);
  const named = `named-${randomBytes(12).toString('hex')}`;
  const inline = `inline-${randomBytes(12).toString('hex')}`;
  const work = tempDir('svc-backup-');
  const backup = path.join(work, 'svc.tar.gz');
  let platform: Platform | undefined;
  let call: Call;
  let dataDir: string;
  let ciToken = '';

  before(async () => {
    const config = testConfig();
    dataDir = config.dataDir;
    platform = await startPlatform({ config });
    call = apiClient(platform.url);
    const owner = platform.ownerToken.secret;
    process.env.VAULT_INLINE = inline;
    let manifest;
    try {
      manifest = await loadManifest({ target: path.join(folder, 'app.py') });
    } finally {
      delete process.env.VAULT_INLINE;
    }
    const bundle = await bundleOfFolder(folder);
    assert.equal((await upload(platform.url, owner, bundle.bytes, bundle.sha256)).status, 201);
    assert.equal(
      (await call('POST', '/api/v1/secrets', { token: owner, json: { name: 'db', values: { DATABASE_URL: named, POOL: '5' } } })).status,
      201,
    );
    const deployed = await call('POST', '/api/v1/apps/vault/deployments', {
      token: owner,
      json: { manifest: manifest.raw, bundle: bundle.sha256, inlineSecrets: manifest.inlineSecrets },
    });
    assert.equal(deployed.status, 201, deployed.text);
    const token = await call('POST', '/api/v1/tokens', { token: owner, json: { name: 'ci' } });
    assert.equal(token.status, 201, token.text);
    ciToken = token.json.secret;
  });
  after(async () => platform?.close());

  it('backs up a running server: its state at one index, its bundles and, when asked, the secrets key', async () => {
    const out = capture();
    await serverBackup(out.context, backup, { 'data-dir': dataDir, 'with-secrets-key': true });
    assert.match(
      out.stderr(),
      /✓ backed up .* to .*svc\.tar\.gz \([\d.]+ KiB\): the state at index \d+ \(keys: .*1 secrets.*\), 1 code bundle, the secrets key/,
    );
    assert.match(out.stderr(), /holds the secrets key: whoever reads it can open every secret in it/);
    // The server went on serving meanwhile.
    const app = await call('GET', '/api/v1/apps/vault', { token: ciToken });
    assert.equal(app.status, 200);

    await assert.rejects(
      serverBackup(capture().context, backup, { 'data-dir': dataDir }),
      /already exists: a backup never replaces a file/,
    );
  });

  it('says disk_full when the backup does not fit where it goes, leaving no part of it there', async function () {
    const disk = mountTmpfs('1m');
    if (disk === null) return this.skip();
    try {
      try {
        execFileSync('dd', ['if=/dev/zero', `of=${path.join(disk.dir, 'filler')}`, 'bs=64k'], { stdio: 'ignore' });
      } catch {
        // dd stops at "No space left on device": full.
      }
      const target = path.join(disk.dir, 'svc.tar.gz');
      await assert.rejects(serverBackup(capture().context, target, { 'data-dir': dataDir }), { code: 'disk_full' });
      assert.deepEqual(readdirSync(disk.dir), ['filler'], 'no backup and no partial file');
    } finally {
      disk.unmount();
    }
  });

  it('restores into an empty data dir: a server started there serves the app with its secrets, and the token works', async () => {
    await platform!.close();
    platform = undefined;
    const restored = tempDir('svc-restored-');
    const out = capture();
    await serverRestore(out.context, backup, { 'data-dir': restored });
    assert.match(
      out.stderr(),
      /✓ restored .*svc\.tar\.gz \(made by svc [\d.]+ at .*\) into .*: the state at index \d+ .*1 code bundle, the secrets key/,
    );

    platform = await startPlatform({ config: testConfig({ dataDir: restored }) });
    const apps = await apiClient(platform.url)('GET', '/api/v1/apps/vault', { token: ciToken });
    assert.equal(apps.status, 200, 'the token made before the backup works');
    const url = apps.json.deployments[0].urls.path as string;
    assert.ok(url.startsWith(platform.url), url);
    assert.deepEqual(await (await fetch(url)).json(), { DATABASE_URL: named, INLINE_TOKEN: inline });

    // Restoring over it is refused, and changes nothing.
    const log = path.join(restored, 'state', 'state.log');
    const before = createHash('sha256').update(readFileSync(log)).digest('hex');
    await assert.rejects(
      serverRestore(capture().context, backup, { 'data-dir': restored }),
      /already holds svc's state: a restore goes into an empty data dir/,
    );
    assert.equal(createHash('sha256').update(readFileSync(log)).digest('hex'), before);
  });

  it('refuses --data-dir without a value on the command line, instead of restoring into the default data dir', () => {
    const cli = path.join(packageRoot, 'dist', 'cli', 'index.js');
    const ran = spawnSync(process.execPath, [cli, 'server', 'restore', backup, '--data-dir'], {
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    });
    assert.equal(ran.status, 1);
    assert.match(ran.stderr, /--data-dir needs a value, as in --data-dir=<value>\./);
  });

  it('refuses archives svc did not write as they are, leaving no store behind', async () => {
    const good = readFileSync(backup);
    const manifest = JSON.stringify({
      format: 1,
      svcVersion: '0.1.0',
      createdAt: new Date().toISOString(),
      stateIndex: 1,
      keys: {},
      bundles: 0,
      secretsKey: false,
    });
    const cases: [string, Buffer, RegExp][] = [
      [
        'a manifest without what backup writes in it',
        await archive([{ name: 'svc-backup.json', body: JSON.stringify({ format: 1, svcVersion: '0.1.0' }) }]),
        /lacks fields svc server backup writes/,
      ],
      [
        'a format that is no whole number',
        await archive([{ name: 'svc-backup.json', body: manifest.replace('"format":1', '"format":-0.5') }]),
        /has no format \(a whole number from 1\)/,
      ],
      [
        'two secrets keys',
        await archive([
          { name: 'svc-backup.json', body: manifest },
          { name: 'secrets.key', body: 'a' },
          { name: 'secrets.key', body: 'b' },
        ]),
        /holds two secrets keys/,
      ],
      [
        'a name svc never writes',
        await archive([
          { name: 'svc-backup.json', body: manifest },
          { name: '../evil', body: 'x' },
        ]),
        /holds "\.\.\/evil", which svc never puts in a backup/,
      ],
      [
        'an absolute path',
        await archive([
          { name: 'svc-backup.json', body: manifest },
          { name: '/etc/cron.d/x', body: 'x' },
        ]),
        /which svc never puts in a backup/,
      ],
      [
        'a link',
        await archive([
          { name: 'svc-backup.json', body: manifest },
          { name: 'secrets.key', body: '', type: 'symlink', linkname: '/etc/shadow' },
        ]),
        /"secrets\.key" is a symlink, where svc writes plain files only/,
      ],
      ['no manifest first', await archive([{ name: 'state/state.log', body: 'x' }]), /does not start with svc-backup\.json/],
      [
        'a newer format',
        await archive([{ name: 'svc-backup.json', body: manifest.replace('"format":1', '"format":99').replace('0.1.0', '9.0.0') }]),
        /made by svc 9\.0\.0 in backup format 99; this svc reads format 1 and earlier/,
      ],
      [
        'a bundle whose bytes are not its name',
        await archive([
          { name: 'svc-backup.json', body: manifest },
          { name: `bundles/${'0'.repeat(64)}.tar.gz`, body: 'not it' },
        ]),
        /sha256/,
      ],
      [
        'a damaged state log',
        await archive([
          { name: 'svc-backup.json', body: manifest },
          { name: 'state/state.log', body: 'SVCSTATE garbage' },
        ]),
        /the state log in .* is damaged at byte/,
      ],
      ['a cut-short archive', good.subarray(0, Math.floor(good.length / 2)), /is not a whole gzipped tar|not a backup svc can restore/],
    ];
    for (const [what, bytes, message] of cases) {
      const file = path.join(work, 'hostile.tar.gz');
      writeFileSync(file, bytes);
      const target = tempDir('svc-hostile-');
      await assert.rejects(serverRestore(capture().context, file, { 'data-dir': target }), message, what);
      assert.equal(existsSync(path.join(target, 'state', 'state.log')), false, `${what}: no store`);
      assert.equal(existsSync(path.join(work, 'evil')), false);
    }
  });
});
