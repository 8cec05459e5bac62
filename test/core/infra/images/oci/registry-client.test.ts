import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { SvcError } from '../../../../../core/model/errors.js';
import { OCI_CONFIG, OCI_LAYER_GZIP, OCI_MANIFEST, MANIFEST_ACCEPT } from '../../../../../core/infra/images/oci/media-types.js';
import { RegistryClient, sha256, type RegistryCredentials } from '../../../../../core/infra/images/oci/registry-client.js';
import { tempDir } from '../../../../helpers/config.js';
import { startRegistryStandin, type RegistryStandin, type RegistryStandinOptions } from '../../../../standins/registry/index.js';

const USERS = { pusher: 'push-secret' };
const CREDENTIALS: RegistryCredentials = { username: 'pusher', password: 'push-secret' };

const scratchDirs: string[] = [];
const registries: RegistryStandin[] = [];

async function registry(options: RegistryStandinOptions = {}): Promise<RegistryStandin> {
  const started = await startRegistryStandin(options);
  registries.push(started);
  return started;
}

/** A blob file of `bytes` (its digest and size as a layer descriptor has them). */
function blobFile(bytes: Buffer): { digest: string; size: number; file: string } {
  const dir = tempDir('svc-blob-');
  scratchDirs.push(dir);
  const file = path.join(dir, 'blob');
  writeFileSync(file, bytes);
  return { digest: sha256(bytes), size: bytes.length, file };
}

/** The SvcError `promise` rejects with, checked to be image_build_failed. */
async function buildFailure(promise: Promise<unknown>): Promise<SvcError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof SvcError, String(error));
    assert.equal(error.code, 'image_build_failed', error.message);
    return error;
  }
  assert.fail('expected image_build_failed');
}

/** Pushes a one-layer image to `repository:tag` through the client; returns its parts. */
async function pushImage(client: RegistryClient, repository: string, tag: string, layerBytes: Buffer) {
  const layer = blobFile(layerBytes);
  assert.equal(await client.hasBlob(repository, layer.digest), false);
  await client.uploadBlob(repository, layer);
  assert.equal(await client.hasBlob(repository, layer.digest), true);
  const config = Buffer.from(
    JSON.stringify({ architecture: 'amd64', os: 'linux', rootfs: { type: 'layers', diff_ids: [sha256(layerBytes)] } }),
  );
  const configDigest = await client.pushBytes(repository, config);
  assert.equal(configDigest, sha256(config));
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: OCI_CONFIG, digest: configDigest, size: config.length },
      layers: [{ mediaType: OCI_LAYER_GZIP, digest: layer.digest, size: layer.size }],
    }),
  );
  const digest = await client.putManifest(repository, tag, manifest, OCI_MANIFEST);
  assert.equal(digest, sha256(manifest));
  return { layer, config, configDigest, manifest, digest };
}

describe('RegistryClient against the registry stand-in', function () {
  this.timeout(30_000);

  after(async () => {
    for (const started of registries.splice(0)) await started.close();
    for (const dir of scratchDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  describe('token auth (a token server, as Docker Hub and distribution)', () => {
    let hub: RegistryStandin;
    let client: RegistryClient;
    let pushed: Awaited<ReturnType<typeof pushImage>>;

    before(async () => {
      hub = await registry({ auth: { mode: 'token', users: USERS } });
      client = new RegistryClient(hub.url, hub.host, CREDENTIALS);
      pushed = await pushImage(client, 'svc/app', 'v1', Buffer.from('layer one'));
    });

    it('pushes blobs, a config and a manifest with credentials, and reads them back', async () => {
      assert.equal(hub.stats.uploads, 2, 'the layer and the config');
      assert.equal(hub.stats.manifestPuts, 1);
      const manifest = await client.getManifest('svc/app', 'v1', MANIFEST_ACCEPT);
      assert.deepEqual(manifest, { bytes: pushed.manifest, mediaType: OCI_MANIFEST, digest: pushed.digest });
      assert.deepEqual(await client.getManifest('svc/app', pushed.digest, MANIFEST_ACCEPT), manifest, 'by digest too');
      assert.equal(await client.hasManifest('svc/app', pushed.digest, MANIFEST_ACCEPT), true);
      assert.equal(await client.hasManifest('svc/app', sha256(Buffer.from('nothing')), MANIFEST_ACCEPT), false);
      assert.deepEqual(await client.getBlob('svc/app', pushed.configDigest), pushed.config);
    });

    it('pushes a config the registry already has without sending it again', async () => {
      const before = hub.stats.uploads;
      assert.equal(await client.pushBytes('svc/app', pushed.config), pushed.configDigest);
      assert.equal(hub.stats.uploads, before);
    });

    it('mounts a blob from another repository of the registry (201), and says false when that repository lacks it', async () => {
      const before = { ...hub.stats };
      assert.equal(await client.mountBlob('svc/other', pushed.layer.digest, 'svc/app'), true);
      assert.equal(hub.stats.mounts, before.mounts + 1);
      assert.equal(hub.stats.uploads, before.uploads, 'mounted, not uploaded');
      assert.equal(await client.hasBlob('svc/other', pushed.layer.digest), true);
      const missing = sha256(Buffer.from('never pushed'));
      assert.equal(await client.mountBlob('svc/third', missing, 'svc/app'), false);
      assert.equal(
        await client.mountBlob('svc/third', pushed.layer.digest, 'svc/empty'),
        false,
        'a repository that does not exist has nothing to mount',
      );
      assert.equal(await client.hasBlob('svc/third', pushed.layer.digest), false);
      assert.equal(hub.stats.mounts, before.mounts + 1);
    });

    it('downloads a blob to a file through a temporary name, checking its digest', async () => {
      const dir = tempDir('svc-download-');
      scratchDirs.push(dir);
      const file = path.join(dir, 'layer');
      await client.downloadBlob('svc/app', pushed.layer.digest, file);
      assert.equal(readFileSync(file, 'utf8'), 'layer one');
      assert.deepEqual(readdirSync(dir), ['layer'], 'no .part left');
    });

    it('a blob the repository lacks is image_build_failed naming the registry and HTTP 404 with BLOB_UNKNOWN', async () => {
      const digest = sha256(Buffer.from('absent'));
      const error = await buildFailure(client.getBlob('svc/app', digest));
      assert.match(
        error.message,
        new RegExp(`the registry ${hub.host.replace(/\./g, '\\.')} refused the blob ${digest} of svc/app \\(HTTP 404: BLOB_UNKNOWN`),
      );
      const dir = tempDir('svc-download-');
      scratchDirs.push(dir);
      await buildFailure(client.downloadBlob('svc/app', digest, path.join(dir, 'layer')));
      assert.deepEqual(readdirSync(dir), [], 'nothing is left behind');
    });

    it('a wrong password is image_build_failed naming the registry and HTTP 401, with a hint to SVC_IMAGE_REGISTRY_USERNAME', async () => {
      const wrong = new RegistryClient(hub.url, hub.host, { username: 'pusher', password: 'nope' });
      const error = await buildFailure(wrong.hasBlob('svc/app', pushed.layer.digest));
      assert.match(error.message, new RegExp(`the registry ${hub.host.replace(/\./g, '\\.')} refused .*\\(HTTP 401`));
      assert.match(error.hint ?? '', /SVC_IMAGE_REGISTRY_USERNAME/);
      assert.deepEqual((error.details as { status: number }).status, 401);
    });

    it('without credentials a push is refused with HTTP 401 (anonymous tokens grant nothing here)', async () => {
      const anonymous = new RegistryClient(hub.url, hub.host, null);
      const error = await buildFailure(anonymous.uploadBlob('svc/app', blobFile(Buffer.from('anon'))));
      assert.match(error.message, /\(HTTP 401: UNAUTHORIZED/);
      assert.match(error.hint ?? '', /SVC_IMAGE_REGISTRY_USERNAME/);
    });
  });

  describe('Basic auth (htpasswd)', () => {
    it('pushes and pulls with credentials on every request', async () => {
      const basic = await registry({ auth: { mode: 'basic', users: USERS } });
      const client = new RegistryClient(basic.url, basic.host, CREDENTIALS);
      const pushed = await pushImage(client, 'team/app', 'latest', Buffer.from('basic layer'));
      assert.equal(basic.stats.manifestPuts, 1);
      assert.deepEqual(await client.getBlob('team/app', pushed.layer.digest), Buffer.from('basic layer'));
      assert.equal(await client.mountBlob('team/copy', pushed.layer.digest, 'team/app'), true);
    });

    it('a wrong password is HTTP 401 with the credentials hint; no credentials at all says so', async () => {
      const basic = await registry({ auth: { mode: 'basic', users: USERS } });
      const wrong = new RegistryClient(basic.url, basic.host, { username: 'pusher', password: 'wrong' });
      const error = await buildFailure(wrong.getManifest('team/app', 'latest', MANIFEST_ACCEPT));
      assert.match(
        error.message,
        new RegExp(`^the registry ${basic.host.replace(/\./g, '\\.')} refused the manifest team/app:latest \\(HTTP 401`),
      );
      assert.match(error.hint ?? '', /SVC_IMAGE_REGISTRY_USERNAME/);
      const none = await buildFailure(new RegistryClient(basic.url, basic.host, null).hasBlob('team/app', sha256(Buffer.from('x'))));
      assert.match(none.message, /refused access without credentials \(HTTP 401\)/);
    });
  });

  it('a registry that is not there is image_build_failed "cannot reach", naming it and the error', async () => {
    const gone = await startRegistryStandin();
    await gone.close();
    const client = new RegistryClient(gone.url, gone.host, null);
    const error = await buildFailure(client.getManifest('library/python', '3.11-slim', MANIFEST_ACCEPT));
    assert.match(
      error.message,
      new RegExp(
        `^cannot reach the registry ${gone.host.replace(/\./g, '\\.')} to read the manifest library/python:3\\.11-slim \\(ECONNREFUSED\\)`,
      ),
    );
    assert.match(error.hint ?? '', /http:\/\//);
  });

  it('follows a 307 redirect to blob storage (no Authorization needed there) and checks the digest', async () => {
    const hub = await registry({ auth: { mode: 'token', users: {}, anonymousPull: true }, redirectBlobs: true });
    const bytes = Buffer.from('redirected layer bytes');
    const other = Buffer.from('other bytes');
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        config: { mediaType: OCI_CONFIG, digest: sha256(other), size: other.length },
        layers: [{ mediaType: OCI_LAYER_GZIP, digest: sha256(bytes), size: bytes.length }],
      }),
    );
    hub.putImage('library/base', '1', { blobs: [bytes, other], manifest, mediaType: OCI_MANIFEST });
    const client = new RegistryClient(hub.url, hub.host, null);
    assert.deepEqual(await client.getBlob('library/base', sha256(bytes)), bytes);
    const dir = tempDir('svc-download-');
    scratchDirs.push(dir);
    await client.downloadBlob('library/base', sha256(bytes), path.join(dir, 'blob'));
    assert.deepEqual(readFileSync(path.join(dir, 'blob')), bytes);
    assert.equal(hub.stats.blobGets, 2);
    const manifestBack = await client.getManifest('library/base', '1', MANIFEST_ACCEPT);
    assert.equal(manifestBack.digest, sha256(manifest));
  });

  it('refuses bytes that do not match their digest (a proxy in between changed them), and leaves no file behind', async () => {
    const hub = await registry();
    const bytes = Buffer.from('the real layer');
    const config = Buffer.from('{}');
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        config: { mediaType: OCI_CONFIG, digest: sha256(config), size: 2 },
        layers: [{ mediaType: OCI_LAYER_GZIP, digest: sha256(bytes), size: bytes.length }],
      }),
    );
    const digest = hub.putImage('x/y', 't', { blobs: [bytes, config], manifest, mediaType: OCI_MANIFEST });
    // A proxy that passes everything through but swaps each body's bytes end for end.
    const proxy = createServer(async (req, res) => {
      const answer = await fetch(`${hub.url}${req.url}`, { method: req.method, headers: { accept: String(req.headers.accept ?? '*/*') } });
      const body = Buffer.from(await answer.arrayBuffer()).reverse();
      res
        .writeHead(answer.status, {
          'content-type': answer.headers.get('content-type') ?? 'application/octet-stream',
          'content-length': body.length,
        })
        .end(body);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = proxy.address() as AddressInfo;
      const client = new RegistryClient(`http://127.0.0.1:${port}`, `127.0.0.1:${port}`, null);
      const blobError = await buildFailure(client.getBlob('x/y', sha256(bytes)));
      assert.match(blobError.message, new RegExp(`sent bytes for x/y@${sha256(bytes)} that do not match that digest`));
      const dir = tempDir('svc-download-');
      scratchDirs.push(dir);
      const download = await buildFailure(client.downloadBlob('x/y', sha256(bytes), path.join(dir, 'blob')));
      assert.match(download.message, /do not match that digest/);
      assert.deepEqual(readdirSync(dir), [], 'no file, no .part');
      const manifestError = await buildFailure(client.getManifest('x/y', digest, MANIFEST_ACCEPT));
      assert.match(manifestError.message, new RegExp(`sent the manifest x/y:${digest} with the digest sha256:`));
    } finally {
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });

  it("uploads through a session whose Location is an absolute URL (distribution's default)", async () => {
    const absolute = await registry({ absoluteLocations: true, auth: { mode: 'token', users: USERS } });
    const client = new RegistryClient(absolute.url, absolute.host, CREDENTIALS);
    const pushed = await pushImage(client, 'abs/app', 'v1', Buffer.from('absolute layer'));
    assert.equal(absolute.stats.uploads, 2);
    assert.deepEqual(await client.getBlob('abs/app', pushed.layer.digest), Buffer.from('absolute layer'));
    assert.equal(await client.hasManifest('abs/app', pushed.digest, MANIFEST_ACCEPT), true);
    assert.ok(!existsSync(`${pushed.layer.file}.part`));
  });
});
