/**
 * The cluster image builder: for Nomad's docker driver, each image is an OCI
 * image pushed to a registry, built without a Docker engine. It starts from
 * a base image with Python (`python:<version>-slim` by default) and adds two
 * layers, each a reproducible tar built here:
 *
 * - `/opt/svc/runtime`: the svc package and the runtime's requirements
 *   (uvicorn…), shared by every image of one Python version and platform;
 * - `/opt/svc/packages`: the image's own packages and requirements files (absent without any).
 *
 * The image's variables (`Image.env`) are in its config's `Env`, under svc's own.
 *
 * Packages are installed with pip for the target platform (wheels only), so
 * nothing built for this machine lands in the image. Base layers are mounted
 * from the base's repository when it is on the same registry, else copied
 * through svc's cache; blobs the registry already has are never sent again.
 * The image's name in jobs is pinned by digest: `<host>/<prefix>/<image id>@sha256:…`.
 */
import path from 'node:path';
import { SvcError } from '../../../model/errors.js';
import { svcVersion } from '../../../model/paths.js';
import type { ImageSpec } from '../../../model/workload/types.js';
import { asBuildError, forImage } from '../build-errors.js';
import { readRuntimeRequirements } from '../runtime-requirements.js';
import { sharedBuild } from '../shared-builds.js';
import type { BuildLog, BuiltImage, ImageBuilder } from '../types.js';
import { type BaseImage, type Platform, resolveBaseImage } from './base-image.js';
import { currentBaseDigest } from './base-digest.js';
import { BlobPusher } from './blob-pusher.js';
import { BUILDER_VERSION, buildHash } from './build-key.js';
import { imageConfig, imageManifest, type SvcLayer } from './image-config.js';
import { LayerCache } from './layer-cache.js';
import { MANIFEST_ACCEPT } from './media-types.js';
import { PersistedMap } from './persisted-map.js';
import { type PushedRecord, PushedRecords } from './pushed-records.js';
import { type ImageReference, parseImageReference, pinnedReference, type RegistryTarget } from './reference.js';
import { RegistryClient, type RegistryCredentials } from './registry-client.js';
import { sdkDigest } from './sdk-files.js';
import { SvcLayers } from './svc-layers.js';
import type { InstallerChoice } from '../../../model/image-settings.js';
import { chooseInstaller, type InstallerOptions } from '../installers.js';

export interface OciBuilderOptions {
  /** `<cacheDir>/oci/` keeps svc's layers and the base layers it copied. */
  readonly cacheDir: string;
  /** The interpreter here that runs the installer (and brings uv). */
  readonly python: string;
  /** What installs the packages of svc's layers: uv (brought on first use), or pip (installers.ts). */
  readonly installer?: InstallerChoice;
  /** A uv binary to use instead of the one svc brings; null: svc's own. */
  readonly uvPath?: string | null;
  /** Where images are pushed. */
  readonly registry: RegistryTarget;
  /** For the push registry (and a base image on it); other registries are read anonymously. */
  readonly credentials: RegistryCredentials | null;
  /** Base image name; `{python}` is replaced by the image's Python version. */
  readonly base: string;
  readonly platform: Platform;
}

export function createOciBuilder(options: OciBuilderOptions): ImageBuilder {
  const images = new OciImages(options);
  return {
    name: 'oci',
    async build(spec, log) {
      try {
        return await images.build(spec, log);
      } catch (error) {
        throw forImage(asBuildError(error), spec.id);
      }
    },
  };
}

/** What one image is built from, decided before the build (its key names it). */
interface ImagePlan {
  readonly key: string;
  readonly repository: string;
  readonly baseName: string;
  /** The base, pinned to the digest its tag names now. */
  readonly base: ImageReference & { readonly digest: string };
  readonly baseClient: RegistryClient;
  readonly requirements: readonly string[];
}

/** The builder's state: the registries it talks to, its caches, and the images it pushed. */
class OciImages {
  private readonly root: string;
  private readonly target: RegistryClient;
  private readonly clients: Map<string, RegistryClient>;
  /** The digest each base image tag named when last read. */
  private readonly baseDigests: PersistedMap;
  private readonly blobs: BlobPusher;
  private readonly layers: SvcLayers;
  private readonly records: PushedRecords;

  constructor(private readonly options: OciBuilderOptions) {
    this.root = path.join(path.resolve(options.cacheDir), 'oci');
    const layers = new LayerCache(this.root);
    this.target = new RegistryClient(options.registry.origin, options.registry.host, options.credentials);
    this.clients = new Map<string, RegistryClient>([[options.registry.host, this.target]]);
    const homes = new PersistedMap(path.join(this.root, 'homes', `${buildHash(options.registry.host)}.json`));
    this.baseDigests = new PersistedMap(path.join(this.root, 'bases.json'));
    this.blobs = new BlobPusher(this.target, options.registry.host, homes, layers);
    const installer: InstallerOptions = {
      choice: options.installer ?? 'auto',
      cacheDir: options.cacheDir,
      python: options.python,
      uvPath: options.uvPath ?? null,
    };
    this.layers = new SvcLayers(this.root, layers, options.python, options.platform, (emit) => chooseInstaller(installer, emit));
    this.records = new PushedRecords(this.root);
  }

  async build(spec: ImageSpec, log: BuildLog): Promise<BuiltImage> {
    const { options } = this;
    const requirements = await readRuntimeRequirements();
    const baseName = options.base.split('{python}').join(spec.pythonVersion);
    const repository = options.registry.prefix === '' ? spec.id : `${options.registry.prefix}/${spec.id}`;
    const named = parseImageReference(baseName);
    const baseClient = this.clientFor(named.host, named.origin);
    // The base as its tag names it now: a tag pushed again makes a new image.
    const base = { ...named, digest: await currentBaseDigest(baseClient, named, baseName, this.baseDigests, log) };
    // The repository (so the image id) is part of the key: each image is pushed under its own name, with its own label.
    const key = `oci-${buildHash({ v: BUILDER_VERSION, base: base.digest, platform: options.platform, python: spec.pythonVersion, packages: spec.pythonPackages, requirements, sdk: await sdkDigest(), registry: options.registry.host, repository, ...ownFields(spec) })}`;
    const plan: ImagePlan = { key, repository, baseName, base, baseClient, requirements };
    const { record, cached } = await sharedBuild(`oci:${key}`, log, async (emit) => {
      const recorded = await this.records.read(key);
      if (recorded !== null && (await this.target.hasManifest(recorded.repository, recorded.digest, MANIFEST_ACCEPT))) {
        return { record: recorded, cached: true };
      }
      return { record: await this.push(spec, plan, emit), cached: false };
    });
    return { key, imageId: spec.id, pythonPath: 'python', path: record.reference, image: record.reference, cached };
  }

  /** Builds the image's layers and pushes them, then its config and manifest; the record says where it is. */
  private async push(spec: ImageSpec, plan: ImagePlan, emit: BuildLog): Promise<PushedRecord> {
    const { options, target } = this;
    const { key, repository, baseName } = plan;
    const base = await resolveBaseImage(plan.baseClient, plan.base, options.platform);
    emit(`base image ${baseName} (${options.platform}): ${base.digest}`);
    checkPython(base, baseName, spec.pythonVersion);
    const source = this.clientFor(base.reference.host, base.reference.origin);
    await this.blobs.copyBaseLayers(base, source, repository, emit);
    const own: SvcLayer[] = [await this.layers.runtime(spec, plan.requirements, emit)];
    if (spec.pythonPackages.length > 0 || spec.requirementsFiles.length > 0) own.push(await this.layers.packages(spec, emit));
    for (const layer of own) await this.blobs.pushLayer(repository, layer, emit);
    const labels = { imageId: spec.id, pythonVersion: spec.pythonVersion, svcVersion };
    const config = Buffer.from(JSON.stringify(imageConfig(base, own, labels, spec.env)));
    const configDigest = await target.pushBytes(repository, config);
    const manifest = imageManifest(base, config, configDigest, own);
    const tag = key.replace(/^oci-/, 'svc-');
    const digest = await target.putManifest(repository, tag, manifest.bytes, manifest.mediaType);
    const record: PushedRecord = { reference: pinnedReference(options.registry, repository, digest), repository, digest };
    emit(`pushed ${options.registry.host}/${repository}:${tag} (${record.reference})`);
    await this.records.write(key, record);
    return record;
  }

  private clientFor(host: string, origin: string): RegistryClient {
    let client = this.clients.get(host);
    if (client === undefined) {
      client = new RegistryClient(origin, host, null);
      this.clients.set(host, client);
    }
    return client;
  }
}

/** An image's requirements files and variables, for its key: only when it has some, so that other images keep their keys. */
function ownFields(spec: ImageSpec): Record<string, unknown> {
  return {
    ...(spec.requirementsFiles.length > 0 ? { requirementsFiles: spec.requirementsFiles } : {}),
    ...(Object.keys(spec.env).length > 0 ? { env: spec.env } : {}),
  };
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
