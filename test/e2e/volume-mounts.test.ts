import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmdirSync } from 'node:fs';
import path from 'node:path';
import { loadManifest, type LoadedManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { testConfig } from '../helpers/config.js';
import { upload } from './api-lifecycle-helpers.js';
import { bundleOfFolder } from './run-helpers.js';
import { volumeDelete } from '../../cli/commands/volume.js';
import { capture, rejectsWith } from '../cli/fixture.js';

const folder = path.join(packageRoot, 'test', 'fixtures', 'volume-mounts');
const MOUNTS = ['/mnt/svc-test-shared', '/mnt/svc-test-ro'];

/**
 * Volumes mounted into real containers of the embedded platform (svc runs as root here: each
 * container gets a private mount namespace and a bind mount). Two apps share one volume: what the
 * writer's worker writes, the reader's sees at once, read-only; a checkpointed worker's start-up code
 * reads it before the checkpoint. Nothing shows on the host's paths. A deploy mounting a volume the
 * workspace lacks (another workspace's included) is refused, and a mounted volume is not deleted
 * unless forced.
 */
describe('volumes mounted into containers (embedded platform)', function () {
  this.timeout(180_000);
  let platform: Platform;
  let call: Call;
  let owner: string;
  let sha = '';
  const manifests: Record<string, LoadedManifest> = {};
  const urls: Record<string, string> = {};
  const deploy = (app: string, token = owner) =>
    call('POST', `/api/v1/apps/${app}/deployments`, { token, json: { manifest: manifests[app]!.raw, bundle: sha } });
  const volumeFile = (name: string) => path.join(platform.config.dataDir, 'volumes', 'default', 'shared', name);

  before(async () => {
    platform = await startPlatform({ config: testConfig() });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    for (const [app, file] of [
      ['vol-writer', 'writer.py'],
      ['vol-reader', 'reader.py'],
    ] as const) {
      manifests[app] = await loadManifest({ target: path.join(folder, file) });
    }
    const bundle = await bundleOfFolder(folder);
    sha = bundle.sha256;
    assert.equal((await upload(platform.url, owner, bundle.bytes, sha)).status, 201);
  });

  after(async () => {
    await platform?.close();
    // The mount points svc made on the host stay empty: the files went to the volume.
    for (const mount of MOUNTS) if (existsSync(mount)) rmdirSync(mount);
  });

  it('writes the mounts into the manifest, path, volume and read-only', () => {
    assert.deepEqual(manifests['vol-reader']!.raw.workloads[0]!.volumes, [{ path: '/mnt/svc-test-ro', volume: 'shared', read_only: true }]);
    assert.deepEqual(manifests['vol-writer']!.raw.workloads[0]!.volumes, [
      { path: '/mnt/svc-test-shared', volume: 'shared', read_only: false },
    ]);
  });

  it('refuses a deploy mounting a volume the workspace lacks, naming it, before anything starts', async () => {
    const refused = await deploy('vol-reader');
    assert.equal(refused.status, 422, refused.text);
    assert.equal(refused.json.error.code, 'volume_not_found');
    assert.equal(refused.json.error.message, 'the workspace default has no volume "shared".');
    assert.deepEqual(refused.json.error.details.volumes, ['shared']);
    assert.equal((await call('GET', '/api/v1/apps/vol-reader', { token: owner })).status, 404, 'no app was made');
  });

  it("two apps' containers share the volume: one writes, the other reads it read-only; the host's paths stay empty", async () => {
    assert.equal((await call('POST', '/api/v1/volumes', { token: owner, json: { name: 'shared' } })).status, 201);
    const seeded = await call('PUT', '/api/v1/volumes/shared/files?path=seed.txt', {
      token: owner,
      body: Buffer.from('seeded before the deploy'),
      headers: { 'Content-Type': 'application/octet-stream' },
    });
    assert.equal(seeded.status, 201, seeded.text);
    for (const app of ['vol-writer', 'vol-reader']) {
      const deployed = await deploy(app);
      assert.equal(deployed.status, 201, deployed.text);
      for (const d of deployed.json.deployments as { workload: string; urls: { path: string } }[]) urls[d.workload] = d.urls.path;
    }
    const written = await fetch(urls.write!, {
      method: 'POST',
      headers: { Authorization: `Bearer ${owner}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ text: 'from the writer' }),
    });
    assert.equal(written.status, 200, await written.clone().text());
    assert.deepEqual(((await written.json()) as { listed: string[] }).listed, ['note.txt', 'seed.txt']);
    assert.equal(readFileSync(volumeFile('note.txt'), 'utf8'), 'from the writer', 'the file is in the volume');
    const read = await fetch(urls.read!, { headers: { Authorization: `Bearer ${owner}` } });
    assert.deepEqual(await read.json(), { text: 'from the writer', write: 'Read-only file system' });
    assert.equal(existsSync(volumeFile('other.txt')), false, 'the read-only mount wrote nothing');
    for (const mount of MOUNTS) assert.ok(!existsSync(path.join(mount, 'note.txt')), `${mount} on the host holds nothing`);
  });

  it("a checkpointed worker's start-up code reads the volume before the checkpoint", async () => {
    const seed = await fetch(urls.seed!, { headers: { Authorization: `Bearer ${owner}` } });
    assert.equal(await seed.json(), 'seeded before the deploy');
  });

  it('names who mounts it, refuses to delete it while they do, and deletes it with force=true', async () => {
    const volume = await call('GET', '/api/v1/volumes/shared', { token: owner });
    assert.deepEqual(volume.json.mountedBy, ['vol-writer/write', 'vol-writer/seed', 'vol-reader/read']);
    const { secret } = await platform.controlPlane.sessions.create(platform.controlPlane.owner.account.id, 'default');
    const page = await fetch(`${platform.url}/dashboard/volumes`, { headers: { Cookie: `svc_session=${secret}` } });
    assert.match(
      await page.text(),
      /<th scope="col">Mounted by<\/th>[\s\S]*<code>vol-writer\/write<\/code>, <code>vol-writer\/seed<\/code>/,
    );
    const refused = await call('DELETE', '/api/v1/volumes/shared', { token: owner });
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.json.error.code, 'volume_in_use');
    assert.match(refused.json.error.message, /mounted by vol-writer\/write, vol-writer\/seed, vol-reader\/read/);
    assert.ok(existsSync(volumeFile('note.txt')), 'nothing was deleted');

    assert.equal((await call('POST', '/api/v1/workspaces', { token: owner, json: { name: 'acme' } })).status, 201);
    const other = (await call('POST', '/api/v1/workspaces/acme/token', { token: owner, json: {} })).json.secret as string;
    assert.equal((await upload(platform.url, other, (await bundleOfFolder(folder)).bytes, sha)).status, 201);
    const theirs = await deploy('vol-reader', other);
    assert.equal(theirs.status, 422, theirs.text);
    assert.equal(theirs.json.error.message, 'the workspace acme has no volume "shared".', "another workspace's volume does not resolve");

    // The CLI: refused without --force (the server's words); with it, it asks, naming who mounts it.
    const env = { SVC_SERVER: platform.url, SVC_TOKEN: owner };
    const plain = await rejectsWith(volumeDelete(capture({ env }).context, 'shared', { yes: true }));
    assert.equal(plain.code, 'volume_in_use');
    assert.match(plain.hint ?? '', /svc volume delete shared --force/);
    const asked = capture({ env, interactive: true, answers: ['n'] });
    assert.equal((await rejectsWith(volumeDelete(asked.context, 'shared', { force: true }))).code, 'confirmation_required');
    assert.match(asked.stderr(), /It is mounted by vol-writer\/write, vol-writer\/seed, vol-reader\/read: their containers lose its files/);
    assert.ok(existsSync(volumeFile('note.txt')), 'a "no" deletes nothing');
    await volumeDelete(capture({ env }).context, 'shared', { force: true, yes: true });
    assert.equal(existsSync(volumeFile('note.txt')), false);
  });
});
