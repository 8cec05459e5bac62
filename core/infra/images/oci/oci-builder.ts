/**
 * The cluster image builder: for Nomad's docker driver, each image is an OCI
 * image pushed to a registry, built without a Docker engine. It starts from
 * a base image with Python (`python:<version>-slim` by default) and adds two
 * layers, each a reproducible tar built here:
 *
 * - `/opt/svc/runtime`: the svc package and the runtime's requirements
 *   (uvicorn…), shared by every image of one Python version and platform;
 * - `/opt/svc/packages`: the image's own packages (absent without any).
 *
 * Packages are installed with pip for the target platform (wheels only), so
 * nothing built for this machine lands in the image. Base layers are mounted
 * from the base's repository when it is on the same registry, else copied
 * through svc's cache; blobs the registry already has are never sent again.
 * The image's name in jobs is pinned by digest: `<host>/<prefix>/<image id>@sha256:…`.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { SvcError } from '../../../model/errors.js';
import { replaceFile } from '../../files/replace-file.js';
import { svcVersion } from '../../../model/paths.js';
import type { ImageSpec } from '../../../model/workload/types.js';
import { asBuildError, forImage } from '../build-errors.js';
import { sharedBuild } from '../shared-builds.js';
import { readRuntimeRequirements } from '../runtime-requirements.js';
import type { BuildLog, BuiltImage, ImageBuilder } from '../types.js';
import { resolveBaseImage, type BaseImage, type Platform } from './base-image.js';
import { imageConfig, imageManifest, type SvcLayer } from './image-config.js';
import { LayerCache } from './layer-cache.js';
import { PersistedMap } from './persisted-map.js';
import { currentBaseDigest } from './base-digest.js';
import { PACKAGES_DIR, RUNTIME_DIR } from './defaults.js';
import { MANIFEST_ACCEPT } from './media-types.js';
import { parseImageReference, pinnedReference, type RegistryTarget } from './reference.js';
import { RegistryClient, type RegistryCredentials } from './registry-client.js';
import { copySdk, sdkDigest } from './sdk-files.js';
import type { LayerBlob } from './tar-layer.js';
import { installWheels } from './wheel-install.js';

/** Bump when the layout of svc's layers or config changes. */
const BUILDER_VERSION = 2;

export interface OciBuilderOptions {
  /** `<cacheDir>/oci/` keeps svc's layers and the base layers it copied. */
  readonly cacheDir: string;
  /** The interpreter that runs pip here. */
  readonly python: string;
  /** Where images are pushed. */
  readonly registry: RegistryTarget;
  /** For the push registry (and a base image on it); other registries are read anonymously. */
  readonly credentials: RegistryCredentials | null;
  /** Base image name; `{python}` is replaced by the image's Python version. */
  readonly base: string;
  readonly platform: Platform;
}

interface PushedRecord {
  readonly reference: string;
  readonly repository: string;
  readonly digest: string;
}

export function createOciBuilder(options: OciBuilderOptions): ImageBuilder {
  const root = path.join(path.resolve(options.cacheDir), 'oci');
  const layers = new LayerCache(root);
  const target = new RegistryClient(options.registry.origin, options.registry.host, options.credentials);
  const clients = new Map<string, RegistryClient>([[options.registry.host, target]]);
  /** A repository of the push registry known to hold each blob: other images mount it from there. */
  const homes = new PersistedMap(path.join(root, 'homes', `${hash(options.registry.host)}.json`));
  /** The digest each base image tag named when last read. */
  const baseDigests = new PersistedMap(path.join(root, 'bases.json'));

  function clientFor(host: string, origin: string): RegistryClient {
    let client = clients.get(host);
    if (client === undefined) {
      client = new RegistryClient(origin, host, null);
      clients.set(host, client);
    }
    return client;
  }

  async function build(spec: ImageSpec, log: BuildLog): Promise<BuiltImage> {
    const requirements = await readRuntimeRequirements();
    const baseName = options.base.split('{python}').join(spec.pythonVersion);
    const repository = options.registry.prefix === '' ? spec.id : `${options.registry.prefix}/${spec.id}`;
    const named = parseImageReference(baseName);
    const baseClient = clientFor(named.host, named.origin);
    // The base as its tag names it now: a tag pushed again makes a new image.
    const reference = { ...named, digest: await currentBaseDigest(baseClient, named, baseName, baseDigests, log) };
    // The repository (so the image id) is part of the key: each image is pushed under its own name, with its own label.
    const key = `oci-${hash({ v: BUILDER_VERSION, base: reference.digest, platform: options.platform, python: spec.pythonVersion, packages: spec.pythonPackages, requirements, sdk: await sdkDigest(), registry: options.registry.host, repository })}`;
    const { record, cached } = await sharedBuild(`oci:${key}`, log, async (emit) => {
      const recorded = await readRecord(key);
      if (recorded !== null && (await target.hasManifest(recorded.repository, recorded.digest, MANIFEST_ACCEPT))) {
        return { record: recorded, cached: true };
      }
      const base = await resolveBaseImage(baseClient, reference, options.platform);
      emit(`base image ${baseName} (${options.platform}): ${base.digest}`);
      checkPython(base, baseName, spec.pythonVersion);
      await copyBaseLayers(base, repository, emit);
      const own: SvcLayer[] = [await runtimeLayer(spec, requirements, emit)];
      if (spec.pythonPackages.length > 0) own.push(await packagesLayer(spec, emit));
      for (const layer of own) await pushLayer(repository, layer, emit);
      const config = Buffer.from(
        JSON.stringify(imageConfig(base, own, { imageId: spec.id, pythonVersion: spec.pythonVersion, svcVersion })),
      );
      const configDigest = await target.pushBytes(repository, config);
      const manifest = imageManifest(base, config, configDigest, own);
      const tag = key.replace(/^oci-/, 'svc-');
      const digest = await target.putManifest(repository, tag, manifest.bytes, manifest.mediaType);
      const record: PushedRecord = { reference: pinnedReference(options.registry, repository, digest), repository, digest };
      emit(`pushed ${options.registry.host}/${repository}:${tag} (${record.reference})`);
      await writeRecord(key, record);
      return { record, cached: false };
    });
    return built(spec, key, record, cached);
  }

  function checkPython(base: BaseImage, name: string, pythonVersion: string): void {
    // Official python images say their version in PYTHON_VERSION; other bases are trusted.
    const declared = base.config.config?.Env?.find((entry) => entry.startsWith('PYTHON_VERSION='))?.slice('PYTHON_VERSION='.length);
    if (declared !== undefined && declared !== pythonVersion && !declared.startsWith(`${pythonVersion}.`)) {
      throw new SvcError(
        'image_build_failed',
        `the base image ${name} has Python ${declared}, but the image asks for Python ${pythonVersion}`,
        {
          hint: 'Name a base image with that Python (imageBase, SVC_IMAGE_BASE; {python} in it stands for the version), or change python_version in Image(...).',
        },
      );
    }
  }

  /**
   * True when the blob is in `repository` already or could be mounted there from a repository of
   * the push registry that holds it (the base's, or another image's pushed by this builder).
   */
  async function alreadyThere(repository: string, digest: string, from: string | null): Promise<boolean> {
    if (await target.hasBlob(repository, digest)) return remember(digest, repository);
    for (const source of new Set([from, await homes.get(digest)])) {
      if (source === null || source === undefined || source === repository) continue;
      if (await target.mountBlob(repository, digest, source)) return remember(digest, repository);
    }
    return false;
  }

  async function remember(digest: string, repository: string): Promise<true> {
    await homes.set(digest, repository);
    return true;
  }

  async function copyBaseLayers(base: BaseImage, repository: string, emit: BuildLog): Promise<void> {
    const sameRegistry = base.reference.host === options.registry.host;
    const source = clientFor(base.reference.host, base.reference.origin);
    for (const layer of base.layers) {
      if (await alreadyThere(repository, layer.digest, sameRegistry ? base.reference.repository : null)) continue;
      const file = layers.blobFile(layer.digest);
      // Two images on one base, built at once, download each of its layers once.
      await sharedBuild(`oci-blob:${file}`, emit, async (log) => {
        if (existsSync(file)) return;
        log(`downloading base layer ${layer.digest} (${megabytes(layer.size)})`);
        await mkdir(layers.blobs, { recursive: true });
        await source.downloadBlob(base.reference.repository, layer.digest, file);
      });
      emit(`pushing base layer ${layer.digest} (${megabytes(layer.size)})`);
      await target.uploadBlob(repository, { digest: layer.digest, size: layer.size, file });
      await remember(layer.digest, repository);
    }
  }

  async function runtimeLayer(spec: ImageSpec, requirements: readonly string[], emit: BuildLog): Promise<SvcLayer> {
    const key = `runtime-${hash({ v: BUILDER_VERSION, python: spec.pythonVersion, platform: options.platform, requirements, sdk: await sdkDigest() })}`;
    const blob = await cachedLayer(key, RUNTIME_DIR, emit, async (dir, log) => {
      log(
        `building the runtime layer ${key}: svc ${svcVersion}, ${requirements.join(', ')} for Python ${spec.pythonVersion} on ${options.platform}`,
      );
      await copySdk(dir);
      await installWheels(
        {
          python: options.python,
          pythonVersion: spec.pythonVersion,
          platform: options.platform,
          packages: requirements,
          into: dir,
          hint: "pip could not get wheels of the runtime's own requirements for that platform and Python: check that pip reaches its index (PIP_INDEX_URL, PIP_FIND_LINKS, pip.conf).",
        },
        log,
      );
    });
    return { blob, path: RUNTIME_DIR, createdBy: `svc: the svc ${svcVersion} runtime (${requirements.join(' ')})` };
  }

  async function packagesLayer(spec: ImageSpec, emit: BuildLog): Promise<SvcLayer> {
    const key = `packages-${hash({ v: BUILDER_VERSION, python: spec.pythonVersion, platform: options.platform, packages: spec.pythonPackages })}`;
    const blob = await cachedLayer(key, PACKAGES_DIR, emit, async (dir, log) => {
      log(`building the packages layer ${key}: ${spec.pythonPackages.join(', ')} for Python ${spec.pythonVersion} on ${options.platform}`);
      await installWheels(
        {
          python: options.python,
          pythonVersion: spec.pythonVersion,
          platform: options.platform,
          packages: spec.pythonPackages,
          into: dir,
          hint: `Check the names and versions in Image.add_python_packages([...]): each must have a wheel for ${options.platform} and Python ${spec.pythonVersion} (svc builds docker images without running the target's Python, so source-only packages cannot be installed).`,
        },
        log,
      );
    });
    return { blob, path: PACKAGES_DIR, createdBy: `svc: pip install ${spec.pythonPackages.join(' ')}` };
  }

  /** A layer of svc's from the cache, or built once (builds of one key in this process at once share one). */
  function cachedLayer(
    key: string,
    under: string,
    emit: BuildLog,
    fill: (dir: string, log: BuildLog) => Promise<void>,
  ): Promise<LayerBlob> {
    return sharedBuild(
      `oci-layer:${root}:${key}`,
      emit,
      async (log) => (await layers.find(key)) ?? layers.build(key, under, (dir) => fill(dir, log)),
    );
  }

  async function pushLayer(repository: string, layer: SvcLayer, emit: BuildLog): Promise<void> {
    if (await alreadyThere(repository, layer.blob.digest, null)) return;
    emit(`pushing layer ${layer.path} ${layer.blob.digest} (${megabytes(layer.blob.size)})`);
    await target.uploadBlob(repository, layer.blob);
    await remember(layer.blob.digest, repository);
  }

  function built(spec: ImageSpec, key: string, record: PushedRecord, cached: boolean): BuiltImage {
    return { key, imageId: spec.id, pythonPath: 'python', path: record.reference, image: record.reference, cached };
  }

  function recordFile(key: string): string {
    return path.join(root, 'images', `${key}.json`);
  }

  async function readRecord(key: string): Promise<PushedRecord | null> {
    try {
      const value = JSON.parse(await readFile(recordFile(key), 'utf8')) as PushedRecord;
      return typeof value.reference === 'string' && typeof value.digest === 'string' && typeof value.repository === 'string' ? value : null;
    } catch {
      return null;
    }
  }

  function writeRecord(key: string, record: PushedRecord): Promise<void> {
    return replaceFile(recordFile(key), JSON.stringify(record));
  }

  return {
    name: 'oci',
    async build(spec, log) {
      try {
        return await build(spec, log);
      } catch (error) {
        throw forImage(asBuildError(error), spec.id);
      }
    },
  };
}

function hash(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 20);
}

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
