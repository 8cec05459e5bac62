/**
 * The OCI image builder and its registry client where a review found them
 * wrong (core/infra/images/oci/): a base tag pushed again, two images on one new base
 * built at once, a registry written with an uppercase host or its default port.
 * Real components: the registry stand-in over HTTP, real files, pip from the
 * local wheel index.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createOciBuilder } from '../../../../../core/infra/images/oci/oci-builder.js';
import { parseRegistryTarget, type RegistryTarget } from '../../../../../core/infra/images/oci/reference.js';
import { RegistryClient } from '../../../../../core/infra/images/oci/registry-client.js';
import type { ImageSpec } from '../../../../../core/model/workload/types.js';
import { OCI_CONFIG, OCI_LAYER_GZIP, OCI_MANIFEST, sha256 } from '../../../../fixtures/oci-layout.js';
import { writeLayer, type TarEntry } from '../../../../fixtures/tar-writer.js';
import { startRegistryStandin, type RegistryStandin } from '../../../../standins/registry/index.js';

const python = process.env.SVC_PYTHON ?? 'python3';

/** Seeds `repo:tag` with a one-layer "python" base image (PYTHON_VERSION=3.11.7, linux/amd64); returns its layer digest. */
async function seedBase(registry: RegistryStandin, dir: string, repo: string, tag: string, entries: readonly TarEntry[]): Promise<string> {
  const layer = await writeLayer(path.join(dir, `layer-${randomBytes(4).toString('hex')}.tar.gz`), entries);
  const config = Buffer.from(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      config: { Env: ['PATH=/usr/local/bin:/usr/bin:/bin', 'PYTHON_VERSION=3.11.7'] },
      rootfs: { type: 'layers', diff_ids: [layer.diffId] },
    }),
  );
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: OCI_CONFIG, digest: sha256(config), size: config.length },
      layers: [{ mediaType: OCI_LAYER_GZIP, digest: layer.digest, size: layer.size }],
    }),
  );
  registry.putImage(repo, tag, { blobs: [config, readFileSync(layer.file)], manifest, mediaType: OCI_MANIFEST });
  return layer.digest;
}

async function pushedManifest(registry: RegistryStandin, reference: string): Promise<{ layers: { digest: string }[] }> {
  const [repository, digest] = reference.slice(registry.host.length + 1).split('@');
  const answer = await fetch(`${registry.url}/v2/${repository}/manifests/${digest}`, { headers: { accept: OCI_MANIFEST } });
  assert.equal(answer.status, 200);
  return (await answer.json()) as { layers: { digest: string }[] };
}

function target(text: string): RegistryTarget {
  const parsed = parseRegistryTarget(text);
  if ('problem' in parsed) throw new Error(parsed.problem);
  return parsed;
}

describe('createOciBuilder(): base tags that move, concurrent builds', function () {
  this.timeout(180_000);
  let registry: RegistryStandin;
  let dir: string;
  /**
   * One cache for the file: the runtime layer (a pip run) is built once. Images and base digests
   * are keyed by registry address and checked against it, so each test's fresh registry starts clean.
   */
  const cacheDir = mkdtempSync(path.join(os.tmpdir(), 'svc-oci-bases-cache-'));
  after(() => rmSync(cacheDir, { recursive: true, force: true }));

  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'svc-oci-bases-'));
  });
  afterEach(async () => {
    await registry?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a base tag that now names another image is built anew, not served from the record of the old one', async () => {
    registry = await startRegistryStandin();
    const v1 = await seedBase(registry, dir, 'base/python', '3.11', [{ type: 'file', name: 'etc/base-version', content: 'v1\n' }]);
    const builder = createOciBuilder({
      cacheDir,
      python,
      registry: target(`${registry.host}/svc`),
      credentials: null,
      base: `${registry.host}/base/python:{python}`,
      platform: 'linux/amd64',
    });
    const spec: ImageSpec = { id: 'img-00000000000000aa', pythonVersion: '3.11', pythonPackages: [], requirementsFiles: [], env: {} };
    const first = await builder.build(spec, () => {});
    assert.equal((await pushedManifest(registry, first.image!)).layers[0]!.digest, v1);

    // The operator updates the base (a security fix, a system library): same tag, new image.
    const v2 = await seedBase(registry, dir, 'base/python', '3.11', [
      { type: 'file', name: 'etc/base-version', content: 'v2 with openssl fix\n' },
    ]);
    const second = await builder.build(spec, () => {});
    const layers = (await pushedManifest(registry, second.image!)).layers.map((l) => l.digest);
    assert.equal(
      layers[0],
      v2,
      `the image svc deploys must start from what ${registry.host}/base/python:3.11 names now (${v2}), not the base of the first build (${v1}); got ${second.image} (cached: ${second.cached})`,
    );
  });

  it("when the base's registry cannot be reached, an image built before is still served, from the tag's last digest", async () => {
    registry = await startRegistryStandin();
    const hub = await startRegistryStandin();
    await seedBase(hub, dir, 'library/python', '3.11-slim', [{ type: 'file', name: 'etc/hub', content: 'hub\n' }]);
    const builder = createOciBuilder({
      cacheDir,
      python,
      registry: target(`${registry.host}/svc`),
      credentials: null,
      base: `${hub.host}/library/python:{python}-slim`,
      platform: 'linux/amd64',
    });
    const spec: ImageSpec = { id: 'img-00000000000000ab', pythonVersion: '3.11', pythonPackages: [], requirementsFiles: [], env: {} };
    const first = await builder.build(spec, () => {});
    await hub.close();
    const lines: string[] = [];
    const again = await builder.build(spec, (line) => lines.push(line));
    assert.equal(again.cached, true);
    assert.equal(again.image, first.image);
    assert.match(lines.join('\n'), /could not read the base image .*; using the digest its tag had last time, sha256:[0-9a-f]{64}/);
    // A base never read before has no last digest: the build fails and says why.
    const other: ImageSpec = { id: 'img-00000000000000ac', pythonVersion: '3.12', pythonPackages: [], requirementsFiles: [], env: {} };
    await assert.rejects(
      builder.build(other, () => {}),
      /cannot reach the registry/,
    );
  });

  it('two images built at once in one process from the same (not yet cached) base layer both succeed', async () => {
    registry = await startRegistryStandin();
    // The base lives on another registry, like Docker Hub (blobs redirected to storage): its layer is downloaded into <cacheDir>/oci/blobs.
    const hub = await startRegistryStandin({ redirectBlobs: true });
    try {
      await seedBase(hub, dir, 'library/python', '3.11-slim', [
        { type: 'file', name: 'usr/lib/big.so', content: randomBytes(12 * 1024 * 1024) },
      ]);
      const builder = createOciBuilder({
        cacheDir,
        python,
        registry: target(`${registry.host}/svc`),
        credentials: null,
        base: `${hub.host}/library/python:{python}-slim`,
        platform: 'linux/amd64',
      });
      // Two apps deployed at the same time: different images, same base.
      const results = await Promise.allSettled([
        builder.build({ id: 'img-00000000000000b1', pythonVersion: '3.11', pythonPackages: [], requirementsFiles: [], env: {} }, () => {}),
        builder.build(
          { id: 'img-00000000000000b2', pythonVersion: '3.11', pythonPackages: ['six'], requirementsFiles: [], env: {} },
          () => {},
        ),
      ]);
      const failed = results
        .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
        .map((r) => String((r.reason as Error).message));
      assert.deepEqual(failed, [], 'both builds succeed');
    } finally {
      await hub.close();
    }
  });
});

describe('RegistryClient: the configured registry origin, normalised', function () {
  this.timeout(30_000);
  let registry: RegistryStandin;
  afterEach(async () => registry?.close());

  it('a registry written with an uppercase host still gets the credentials', async () => {
    registry = await startRegistryStandin({ auth: { mode: 'basic', users: { pusher: 'push-secret' } } });
    const port = registry.host.split(':')[1];
    // Host names are case-insensitive; the config loader accepts this form.
    const where = target(`http://LOCALHOST:${port}/svc`);
    const client = new RegistryClient(where.origin, where.host, { username: 'pusher', password: 'push-secret' });
    const digest = await client.pushBytes('svc/img-00000000000000cc', Buffer.from('{"a":1}'));
    assert.equal(digest, sha256('{"a":1}'));
  });

  it('a registry written with its default port (host:443, here 127.0.0.1:80) still gets the credentials', async function () {
    registry = await startRegistryStandin({ auth: { mode: 'basic', users: { pusher: 'push-secret' } } });
    const port = Number(registry.host.split(':')[1]);
    // A plain TCP forwarder on port 80 to the stand-in (tests run as root here; skipped otherwise).
    const forwarder = net.createServer((socket) => {
      const upstream = net.connect(port, '127.0.0.1');
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    });
    const listening = await new Promise<boolean>((resolve) => {
      forwarder.once('error', () => resolve(false));
      forwarder.listen(80, '127.0.0.1', () => resolve(true));
    });
    if (!listening) this.skip();
    try {
      const where = target('http://127.0.0.1:80/svc');
      const client = new RegistryClient(where.origin, where.host, { username: 'pusher', password: 'push-secret' });
      const digest = await client.pushBytes('svc/img-00000000000000dd', Buffer.from('{"b":2}'));
      assert.equal(digest, sha256('{"b":2}'));
    } finally {
      await new Promise<void>((resolve) => forwarder.close(() => resolve()));
    }
  });
});
