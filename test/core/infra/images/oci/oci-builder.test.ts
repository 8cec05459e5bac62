process.env.PIP_RETRIES ??= '0';

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { SvcError } from '../../../../../core/model/errors.js';
import { createOciBuilder } from '../../../../../core/infra/images/oci/oci-builder.js';
import {
  DOCKER_CONFIG,
  DOCKER_LAYER_GZIP,
  DOCKER_MANIFEST,
  MANIFEST_ACCEPT,
  OCI_CONFIG,
  OCI_INDEX,
  OCI_LAYER_GZIP,
  OCI_MANIFEST,
} from '../../../../../core/infra/images/oci/media-types.js';
import { parseRegistryTarget } from '../../../../../core/infra/images/oci/reference.js';
import { RegistryClient, type RegistryCredentials } from '../../../../../core/infra/images/oci/registry-client.js';
import type { BuiltImage, ImageBuilder } from '../../../../../core/infra/images/types.js';
import type { ImageSpec } from '../../../../../core/model/workload/types.js';
import { writeLayer, type TarEntry } from '../../../../fixtures/tar-writer.js';
import { tempDir } from '../../../../helpers/config.js';
import { startRegistryStandin, type RegistryStandin, type RegistryStandinOptions } from '../../../../standins/registry/index.js';

const CREDENTIALS: RegistryCredentials = { username: 'pusher', password: 'push-secret' };
const PUSH_AUTH = { mode: 'token', users: { pusher: 'push-secret' } } as const;
const PYTHON = process.env.SVC_PYTHON ?? 'python3';

const scratchDirs: string[] = [];

/**
 * A fresh cache dir holding only `from`'s runtime layers (their records and blobs) and its tools
 * (uv): a build in it builds the image's packages layer, not the runtime layer again, nor brings uv.
 */
function cacheWithRuntimeLayer(from: string): string {
  const dir = tempDir('svc-oci-installer-');
  const layers = path.join(from, 'oci', 'layers');
  mkdirSync(path.join(dir, 'oci', 'layers'), { recursive: true });
  mkdirSync(path.join(dir, 'oci', 'blobs'), { recursive: true });
  for (const name of readdirSync(layers).filter((file) => file.startsWith('runtime-'))) {
    const record = JSON.parse(readFileSync(path.join(layers, name), 'utf8')) as { digest: string };
    const blob = record.digest.replace(':', '-');
    copyFileSync(path.join(layers, name), path.join(dir, 'oci', 'layers', name));
    copyFileSync(path.join(from, 'oci', 'blobs', blob), path.join(dir, 'oci', 'blobs', blob));
  }
  if (existsSync(path.join(from, 'tools'))) symlinkSync(path.join(from, 'tools'), path.join(dir, 'tools'));
  return dir;
}
function scratch(prefix: string): string {
  const dir = tempDir(prefix);
  scratchDirs.push(dir);
  return dir;
}

interface BaseOptions {
  readonly env?: string[];
  readonly format?: 'oci' | 'docker';
  readonly architecture?: string;
  /** Serve the manifest through a multi-platform index listing these (its own platform first). */
  readonly index?: boolean;
  /** Extra text in the layer's one file, so that its digest is its own. */
  readonly marker?: string;
}

interface SeededBase {
  readonly layer: { digest: string; size: number; diffId: string; mediaType: string };
  readonly manifestDigest: string;
  readonly config: Record<string, unknown>;
}

/** A small hand-made base image (one layer with /etc/os-release) seeded into `registry` at `repo:tag`. */
async function seedBase(registry: RegistryStandin, repo: string, tag: string, options: BaseOptions = {}): Promise<SeededBase> {
  const format = options.format ?? 'oci';
  const architecture = options.architecture ?? 'amd64';
  const entries: TarEntry[] = [
    { type: 'dir', name: 'etc/' },
    { type: 'file', name: 'etc/os-release', content: `ID=svc-test-base\nARCH=${architecture}\n${options.marker ?? ''}` },
  ];
  const layer = await writeLayer(path.join(scratch('svc-base-'), 'layer.tar.gz'), entries);
  const config = {
    architecture,
    os: 'linux',
    created: '2024-01-01T00:00:00Z',
    config: {
      Env: options.env ?? ['PATH=/usr/local/bin:/usr/bin:/bin', 'PYTHON_VERSION=3.11.9', 'PYTHONPATH=/base/own'],
      Labels: { 'org.example.base': 'yes' },
      Cmd: ['python3'],
    },
    rootfs: { type: 'layers', diff_ids: [layer.diffId] },
    history: [{ created: '2024-01-01T00:00:00Z', created_by: 'test base layer' }],
  };
  const configBytes = Buffer.from(JSON.stringify(config));
  const types =
    format === 'oci'
      ? { manifest: OCI_MANIFEST, config: OCI_CONFIG, layer: OCI_LAYER_GZIP }
      : { manifest: DOCKER_MANIFEST, config: DOCKER_CONFIG, layer: DOCKER_LAYER_GZIP };
  const layerBytes = execFileSync('cat', [layer.file]);
  const descriptor = { mediaType: types.layer, digest: layer.digest, size: layer.size };
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: types.manifest,
      config: { mediaType: types.config, digest: sha256(configBytes), size: configBytes.length },
      layers: [descriptor],
    }),
  );
  const manifestDigest = registry.putImage(repo, options.index === true ? `${tag}-${architecture}` : tag, {
    blobs: [layerBytes, configBytes],
    manifest,
    mediaType: types.manifest,
  });
  if (options.index === true) {
    const index = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_INDEX,
        manifests: [{ mediaType: types.manifest, digest: manifestDigest, size: manifest.length, platform: { os: 'linux', architecture } }],
      }),
    );
    registry.putImage(repo, tag, { blobs: [], manifest: index, mediaType: OCI_INDEX });
  }
  return { layer: { ...descriptor, diffId: layer.diffId }, manifestDigest, config };
}

function sha256(bytes: Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/**
 * A TCP proxy on a port of its own that forwards to a registry stand-in that can be swapped: the
 * same registry address (as svc's cache keys see it) with a fresh registry behind it.
 */
class SwitchableProxy {
  private readonly sockets = new Set<net.Socket>();
  private readonly server = net.createServer((client) => {
    const upstream = net.connect(this.port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  host = '';

  constructor(private port: number) {}

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.host = `127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
    return this;
  }

  /** Sends new connections to `registry`, and cuts the open ones (pooled keep-alive sockets). */
  async switchTo(registry: RegistryStandin): Promise<void> {
    this.port = Number(registry.host.split(':')[1]);
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function image(id: string, pythonPackages: string[] = [], pythonVersion = '3.11'): ImageSpec {
  return { id, pythonVersion, pythonPackages, requirementsFiles: [], env: {} };
}

interface Pushed {
  readonly manifest: {
    mediaType: string;
    config: { mediaType: string; digest: string };
    layers: { mediaType: string; digest: string; size: number }[];
  };
  readonly config: {
    architecture: string;
    config: { Env: string[]; Labels: Record<string, string> };
    rootfs: { diff_ids: string[] };
    history: { created_by: string }[];
  };
  readonly mediaType: string;
}

/** The manifest and config of a built image, read back from the registry (through `host`). */
async function readBack(
  registryUrl: string,
  host: string,
  built: BuiltImage,
): Promise<Pushed & { client: RegistryClient; repository: string }> {
  const [name, digest] = built.image!.split('@') as [string, string];
  const repository = name.slice(host.length + 1);
  const client = new RegistryClient(registryUrl, host, CREDENTIALS);
  const manifest = await client.getManifest(repository, digest, MANIFEST_ACCEPT);
  assert.equal(manifest.digest, digest);
  const body = JSON.parse(manifest.bytes.toString('utf8')) as Pushed['manifest'];
  const config = JSON.parse((await client.getBlob(repository, body.config.digest)).toString('utf8')) as Pushed['config'];
  return { manifest: body, config, mediaType: manifest.mediaType, client, repository };
}

/** The names in a layer blob of the registry, as GNU tar lists them; unpacked into the returned folder. */
async function unpack(
  client: RegistryClient,
  repository: string,
  digest: string,
): Promise<{ names: string[]; dir: string; diffId: string }> {
  const dir = scratch('svc-layer-');
  const file = path.join(dir, 'layer.tar.gz');
  writeFileSync(file, await client.getBlob(repository, digest));
  const names = execFileSync('tar', ['-tzf', file], { encoding: 'utf8', maxBuffer: 64 << 20 })
    .trim()
    .split('\n');
  execFileSync('tar', ['-xzf', file, '-C', dir]);
  const diffId = sha256(execFileSync('gzip', ['-dc', file], { maxBuffer: 256 << 20 }));
  return { names, dir, diffId };
}

async function buildFailure(builder: ImageBuilder, spec: ImageSpec): Promise<SvcError> {
  try {
    await builder.build(spec, () => {});
  } catch (error) {
    assert.ok(error instanceof SvcError, String(error));
    assert.equal(error.code, 'image_build_failed', error.message);
    assert.match(error.message, new RegExp(`^building image ${spec.id} failed: `));
    return error;
  }
  assert.fail(`expected building ${spec.id} to fail`);
}

describe('createOciBuilder()#build() with the registry stand-in', function () {
  this.timeout(300_000);
  const registries: RegistryStandin[] = [];
  /** One layer cache for the file: the runtime layer is built once (cold) by the first test. */
  let cacheDir: string;
  let proxy: SwitchableProxy;
  /** Where svc pushes, behind the proxy: token auth, pushes need the account. */
  let first: RegistryStandin;
  let firstBase: SeededBase;
  /** Like Docker Hub: anonymous pulls, blobs redirected to storage. */
  let hub: RegistryStandin;

  async function registry(options: RegistryStandinOptions): Promise<RegistryStandin> {
    const started = await startRegistryStandin(options);
    registries.push(started);
    return started;
  }

  function builder(
    overrides: { base?: string; credentials?: RegistryCredentials | null; cacheDir?: string; installer?: 'uv' | 'pip' } = {},
  ): ImageBuilder {
    const target = parseRegistryTarget(`${proxy.host}/svc`);
    assert.ok(!('problem' in target));
    return createOciBuilder({
      cacheDir: overrides.cacheDir ?? cacheDir,
      python: PYTHON,
      registry: target,
      credentials: overrides.credentials === undefined ? CREDENTIALS : overrides.credentials,
      base: overrides.base ?? `${proxy.host}/library/python:{python}-slim`,
      platform: 'linux/amd64',
      ...(overrides.installer === undefined ? {} : { installer: overrides.installer }),
    });
  }

  before(async () => {
    cacheDir = scratch('svc-oci-cache-');
    first = await registry({ auth: PUSH_AUTH });
    firstBase = await seedBase(first, 'library/python', '3.11-slim', { index: true });
    hub = await registry({ auth: { mode: 'token', users: {}, anonymousPull: true }, redirectBlobs: true });
    proxy = await new SwitchableProxy(Number(first.host.split(':')[1])).start();
  });
  after(async () => {
    await proxy?.close();
    for (const started of registries.splice(0)) await started.close();
    for (const dir of scratchDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  let plain: BuiltImage;

  it('builds on a base of the same registry: base layers mounted, the runtime layer and config uploaded, pinned by digest', async () => {
    const lines: string[] = [];
    plain = await builder().build(image('img-0000000000000001'), (line) => lines.push(line));
    assert.ok(
      lines.some((line) => line.startsWith('building the runtime layer')),
      'a cold cache builds the runtime layer',
    );
    assert.match(plain.image!, new RegExp(`^${proxy.host.replace(/\./g, '\\.')}/svc/img-0000000000000001@sha256:[0-9a-f]{64}$`));
    assert.equal(plain.cached, false);
    assert.equal(plain.imageId, 'img-0000000000000001');
    assert.equal(plain.path, plain.image);
    assert.deepEqual(
      { ...first.stats, blobGets: 0 },
      { uploads: 2, mounts: 1, blobGets: 0, manifestPuts: 1 },
      'the base layer mounted; the runtime layer and the config uploaded',
    );

    const { manifest, config, mediaType, client, repository } = await readBack(first.url, proxy.host, plain);
    assert.equal(mediaType, OCI_MANIFEST, "the base's format");
    assert.equal(manifest.config.mediaType, OCI_CONFIG);
    assert.equal(manifest.layers.length, 2);
    assert.deepEqual(manifest.layers[0], { mediaType: OCI_LAYER_GZIP, digest: firstBase.layer.digest, size: firstBase.layer.size });
    assert.equal(manifest.layers[1]!.mediaType, OCI_LAYER_GZIP);
    const runtime = await unpack(client, repository, manifest.layers[1]!.digest);
    assert.deepEqual(config.rootfs.diff_ids, [firstBase.layer.diffId, runtime.diffId], "the base's diff_ids, then the runtime layer's");
    assert.equal(config.architecture, 'amd64');
    const env = config.config.Env;
    assert.ok(env.includes('PYTHONPATH=/opt/svc/runtime'), env.join(' '));
    assert.ok(!env.includes('PYTHONPATH=/base/own'), "the base's PYTHONPATH is replaced, not doubled");
    assert.ok(
      env.includes('PYTHON_VERSION=3.11.9') && env.includes('PATH=/usr/local/bin:/usr/bin:/bin'),
      "the base's other variables stay",
    );
    assert.ok(env.includes('PYTHONDONTWRITEBYTECODE=1'));
    assert.equal(config.config.Labels['dev.svc.image-id'], 'img-0000000000000001');
    assert.equal(config.config.Labels['dev.svc.python-version'], '3.11');
    assert.equal(config.config.Labels['org.example.base'], 'yes', "the base's labels stay");
    assert.equal(config.history.length, 2);
    assert.match(config.history[1]!.created_by, /^svc: the svc .* runtime/);

    // The runtime layer: the svc package and the runtime's requirements, for the target, without bytecode.
    assert.ok(runtime.names.includes('opt/svc/runtime/svc/__init__.py'), runtime.names.slice(0, 20).join('\n'));
    assert.ok(
      runtime.names.some((name) => name.startsWith('opt/svc/runtime/uvicorn/')),
      'uvicorn is in the runtime layer',
    );
    assert.deepEqual(
      runtime.names.filter((name) => name.endsWith('.pyc') || name.includes('__pycache__')),
      [],
    );
    const listing = execFileSync('tar', ['--numeric-owner', '-tvzf', path.join(runtime.dir, 'layer.tar.gz')], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
      env: { ...process.env, TZ: 'UTC' },
    });
    assert.ok(
      listing
        .trim()
        .split('\n')
        .every((line) => / 0\/0 +\d+ 1970-01-01 00:00 /.test(line)),
      'reproducible entries',
    );
  });

  it('a second build of the same image is cached: nothing uploaded, no manifest pushed', async () => {
    const before = { ...first.stats };
    const lines: string[] = [];
    const again = await builder().build(image('img-0000000000000001'), (line) => lines.push(line));
    assert.equal(again.cached, true);
    assert.equal(again.image, plain.image);
    assert.deepEqual(first.stats, before);
    assert.deepEqual(lines, []);
  });

  it('a second builder over the same cache, against a fresh registry at the same address, pushes again (the record is checked)', async () => {
    const fresh = await registry({ auth: PUSH_AUTH });
    await seedBase(fresh, 'library/python', '3.11-slim', { index: true });
    await proxy.switchTo(fresh);
    const lines: string[] = [];
    const rebuilt = await builder().build(image('img-0000000000000001'), (line) => lines.push(line));
    assert.equal(rebuilt.cached, false);
    assert.equal(rebuilt.image, plain.image, 'the same inputs give the same digest');
    assert.ok(!lines.some((line) => line.startsWith('building the runtime layer')), 'the runtime layer came from the layer cache');
    assert.deepEqual({ ...fresh.stats, blobGets: 0 }, { uploads: 2, mounts: 1, blobGets: 0, manifestPuts: 1 });
    const { repository } = await readBack(fresh.url, proxy.host, rebuilt);
    assert.equal(repository, 'svc/img-0000000000000001');
  });

  it('an image with packages gets a second svc layer at /opt/svc/packages, first on PYTHONPATH', async () => {
    const registryNow = registries.at(-1)!;
    const before = { ...registryNow.stats };
    const built = await builder().build(image('img-0000000000000002', ['six']), () => {});
    assert.equal(built.cached, false);
    assert.ok(registryNow.stats.uploads - before.uploads >= 2, 'the packages layer and the config');
    const { manifest, config, client, repository } = await readBack(registryNow.url, proxy.host, built);
    assert.equal(manifest.layers.length, 3);
    assert.ok(config.config.Env.includes('PYTHONPATH=/opt/svc/packages:/opt/svc/runtime'), config.config.Env.join(' '));
    assert.equal(config.history.at(-1)!.created_by, 'svc: pip install six');
    const packages = await unpack(client, repository, manifest.layers[2]!.digest);
    assert.deepEqual(config.rootfs.diff_ids.at(-1), packages.diffId);
    assert.ok(packages.names.includes('opt/svc/packages/six.py'), packages.names.join('\n'));
    assert.match(
      execFileSync('cat', [path.join(packages.dir, 'opt/svc/packages/six.py')], { encoding: 'utf8' }),
      /Utilities for writing code that runs on Python 2 and 3/,
    );
    assert.ok(
      packages.names.every((name) => name.startsWith('opt/')),
      'everything under /opt/svc/packages',
    );
  });

  it('fills the packages layer with uv by default, and with pip when asked, with the same wheel for the target', async () => {
    const layerOf = async (installer: 'uv' | 'pip', id: string) => {
      const lines: string[] = [];
      // A cache dir of its own: the packages layer is built, not taken from the other build's cache.
      const built = await builder({ installer, cacheDir: cacheWithRuntimeLayer(cacheDir) }).build(image(id, ['six']), (line) =>
        lines.push(line),
      );
      assert.ok(!lines.some((line) => line.startsWith('building the runtime layer')), 'the runtime layer came with the cache');
      assert.ok(
        lines.some((line) => line.startsWith('building the packages layer')),
        `the packages layer is built in the fresh cache:\n${lines.join('\n')}`,
      );
      const { manifest, client, repository } = await readBack(registries.at(-1)!.url, proxy.host, built);
      const packages = await unpack(client, repository, manifest.layers[2]!.digest);
      return { lines: lines.join('\n'), six: readFileSync(path.join(packages.dir, 'opt/svc/packages/six.py'), 'utf8') };
    };
    const uv = await layerOf('uv', 'img-00000000000000a1');
    assert.match(uv.lines, /installing with uv \d/);
    const pip = await layerOf('pip', 'img-00000000000000a2');
    assert.match(pip.lines, /installing with pip \(imageInstaller is pip\)/);
    assert.equal(pip.six, uv.six, 'the same six.py, whichever installed it');
  });

  it("installs an image's requirements files into its packages layer, and puts its variables in the config under svc's own", async () => {
    const spec: ImageSpec = {
      ...image('img-0000000000000006', ['six']),
      // Two files of one name (from two folders): each is its own -r.
      requirementsFiles: [
        { name: 'requirements.txt', content: '# pinned\nidna\n' },
        { name: 'requirements.txt', content: 'six\n' },
      ],
      env: { HF_HOME: '/tmp/hf', GREETING: 'héllo world' },
    };
    const logs: string[] = [];
    const built = await builder().build(spec, (line) => logs.push(line));
    const { manifest, config, client, repository } = await readBack(registries.at(-1)!.url, proxy.host, built);
    assert.equal(manifest.layers.length, 3);
    assert.equal(config.history.at(-1)!.created_by, 'svc: pip install six -r requirements.txt -r requirements.txt');
    const packages = await unpack(client, repository, manifest.layers[2]!.digest);
    assert.ok(packages.names.includes('opt/svc/packages/six.py'), packages.names.join('\n'));
    assert.ok(
      packages.names.some((name) => name.startsWith('opt/svc/packages/idna/')),
      'the first file installed too',
    );
    const env = config.config.Env;
    assert.ok(env.includes('HF_HOME=/tmp/hf') && env.includes('GREETING=héllo world'), env.join(' '));
    assert.ok(env.indexOf('HF_HOME=/tmp/hf') < env.findIndex((entry) => entry.startsWith('PYTHONPATH=')), "svc's own come last");
    assert.ok(!env.includes('PYTHONPATH=/base/own'), "svc's PYTHONPATH still replaces the base's");
    // The same packages without the files make another layer: the files' text is part of its key.
    const plainSix = await builder().build(image('img-0000000000000007', ['six']), () => {});
    const plain = await readBack(registries.at(-1)!.url, proxy.host, plainSix);
    assert.notEqual(plain.manifest.layers[2]!.digest, manifest.layers[2]!.digest);
    assert.ok(!plain.config.config.Env.some((entry) => entry.startsWith('HF_HOME=')));
  });

  it('copies base layers from another registry (Docker format, redirected blobs) through the cache, keeping the Docker format', async () => {
    // A layer of its own: no earlier image pushed it, so it must come from the hub.
    const dockerBase = await seedBase(hub, 'library/python', '3.11-slim', { format: 'docker', marker: 'VARIANT=docker-format\n' });
    const registryNow = registries.at(-1)!;
    const before = { ...registryNow.stats };
    const built = await builder({ base: `${hub.host}/library/python:{python}-slim` }).build(image('img-0000000000000003'), () => {});
    // Layers svc pushed for earlier images (the runtime's) are mounted from their repositories; the config is new.
    assert.ok(registryNow.stats.uploads - before.uploads >= 1, 'the config at least');
    assert.ok(hub.stats.blobGets >= 2, "the base's config and layer came from the other registry");
    const { manifest, mediaType, config } = await readBack(registryNow.url, proxy.host, built);
    assert.equal(mediaType, DOCKER_MANIFEST);
    assert.equal(manifest.config.mediaType, DOCKER_CONFIG);
    assert.deepEqual(
      manifest.layers.map((layer) => layer.mediaType),
      [DOCKER_LAYER_GZIP, DOCKER_LAYER_GZIP],
    );
    assert.equal(manifest.layers[0]!.digest, dockerBase.layer.digest);
    assert.equal(config.rootfs.diff_ids[0], dockerBase.layer.diffId);
  });

  it("a second image on the same registry does not send the runtime layer again (the registry has it, in the first image's repository)", async () => {
    const registryNow = registries.at(-1)!;
    const before = { ...registryNow.stats };
    await builder().build(image('img-0000000000000005', ['idna']), () => {});
    assert.equal(registryNow.stats.uploads - before.uploads, 2, 'the packages layer and the config only; the runtime layer mounted');
  });

  it("two images with the same packages built at once each get their own image id (not the other's)", async () => {
    const [a, b] = await Promise.all([
      builder().build(image('img-00000000000000aa', ['six']), () => {}),
      builder().build(image('img-00000000000000bb', ['six']), () => {}),
    ]);
    assert.equal(a.imageId, 'img-00000000000000aa');
    assert.equal(b.imageId, 'img-00000000000000bb');
    assert.match(b.image!, /\/svc\/img-00000000000000bb@sha256:/, 'pinned under its own repository');
    const { config } = await readBack(registries.at(-1)!.url, proxy.host, b);
    assert.equal(config.config.Labels['dev.svc.image-id'], 'img-00000000000000bb');
  });

  it("an image whose packages match an earlier image's is still pushed under its own name and label", async () => {
    const later = await builder().build(image('img-0000000000000004'), () => {});
    assert.equal(later.imageId, 'img-0000000000000004');
    assert.match(later.image!, /\/svc\/img-0000000000000004@sha256:/);
    const { config } = await readBack(registries.at(-1)!.url, proxy.host, later);
    assert.equal(config.config.Labels['dev.svc.image-id'], 'img-0000000000000004');
  });

  describe('failures, each image_build_failed with what to change', () => {
    it('a base image with another Python than the image asks for', async () => {
      await seedBase(hub, 'other/python', '3.11', { env: ['PYTHON_VERSION=3.12.1'] });
      const error = await buildFailure(builder({ base: `${hub.host}/other/python:{python}` }), image('img-00000000000000e1'));
      assert.match(
        error.message,
        new RegExp(
          `the base image ${hub.host.replace(/\./g, '\\.')}/other/python:3\\.11 has Python 3\\.12\\.1, but the image asks for Python 3\\.11$`,
        ),
      );
      assert.match(error.hint ?? '', /imageBase, SVC_IMAGE_BASE/);
    });

    it('a base index without the target platform lists the platforms it has', async () => {
      await seedBase(hub, 'armonly/python', '3.11-slim', { architecture: 'arm64', index: true });
      const error = await buildFailure(builder({ base: `${hub.host}/armonly/python:{python}-slim` }), image('img-00000000000000e2'));
      assert.match(error.message, /armonly\/python:3\.11-slim has no linux\/amd64 variant \(it has: linux\/arm64\)$/);
      assert.match(error.hint ?? '', /imagePlatform/);
    });

    it('a base tag the registry does not have is HTTP 404, with a hint about imageBase', async () => {
      const error = await buildFailure(builder({ base: `${hub.host}/library/python:{python}-nonexistent` }), image('img-00000000000000e3'));
      assert.match(error.message, /refused the manifest library\/python:3\.11-nonexistent \(HTTP 404: MANIFEST_UNKNOWN/);
      assert.match(error.hint ?? '', /imageBase, SVC_IMAGE_BASE/);
    });

    it("a package the installer cannot find quotes the installer's error", async () => {
      const error = await buildFailure(builder(), image('img-00000000000000e4', ['svc-no-such-package-xyz']));
      // uv by default (pip when uv cannot be had): each says it in its own words.
      assert.match(error.message, /(uv )?pip install \(for linux\/amd64, Python 3\.11\) svc-no-such-package-xyz exited with code 1:/);
      assert.match(
        error.message,
        /No matching distribution found for svc-no-such-package-xyz|svc-no-such-package-xyz was not found in the package registry/,
      );
      assert.match(error.hint ?? '', /Image\.add_python_packages/);
    });

    it('a wrong registry password is HTTP 401 with the credentials hint', async () => {
      const error = await buildFailure(builder({ credentials: { username: 'pusher', password: 'wrong' } }), image('img-00000000000000e5'));
      assert.match(error.message, new RegExp(`the registry ${proxy.host.replace(/\./g, '\\.')} refused .*\\(HTTP 401`));
      assert.match(error.hint ?? '', /SVC_IMAGE_REGISTRY_USERNAME/);
    });
  });
});
