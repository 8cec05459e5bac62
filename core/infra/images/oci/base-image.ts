/**
 * The base image an svc image starts from (`python:3.11-slim` by default):
 * its manifest for the target platform (picked from a multi-platform index)
 * and its config, read from the registry that holds it.
 */
import { SvcError } from '../../../model/errors.js';
import { isImageManifest, isIndex, MANIFEST_ACCEPT, OCI_MANIFEST, type ManifestFormat } from './media-types.js';
import type { ImageReference } from './reference.js';
import type { RegistryClient } from './registry-client.js';

export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
}

export interface ImageConfig {
  architecture?: string;
  os?: string;
  created?: string;
  config?: { Env?: string[]; Labels?: Record<string, string>; [key: string]: unknown };
  rootfs: { type: string; diff_ids: string[] };
  history?: Record<string, unknown>[];
  [key: string]: unknown;
}

export interface BaseImage {
  readonly reference: ImageReference;
  /** The platform manifest's digest. */
  readonly digest: string;
  readonly format: ManifestFormat;
  readonly layers: readonly Descriptor[];
  readonly config: ImageConfig;
}

export type Platform = 'linux/amd64' | 'linux/arm64';

export async function resolveBaseImage(client: RegistryClient, reference: ImageReference, platform: Platform): Promise<BaseImage> {
  const name = `${reference.host}/${reference.repository}${reference.tag === null ? '' : `:${reference.tag}`}`;
  let manifest = await client.getManifest(reference.repository, reference.digest ?? reference.tag!, MANIFEST_ACCEPT);
  if (isIndex(manifest.mediaType)) {
    const entry = pickPlatform(parse(manifest.bytes, name), platform, name);
    manifest = await client.getManifest(reference.repository, entry.digest, MANIFEST_ACCEPT);
  }
  if (!isImageManifest(manifest.mediaType)) {
    throw new SvcError(
      'image_build_failed',
      `the base image ${name} is a ${manifest.mediaType || 'manifest of no media type'}, not an OCI or Docker v2 image`,
      {
        hint: 'Use a base image pushed with a current Docker or OCI tool (imageBase, SVC_IMAGE_BASE).',
      },
    );
  }
  const body = parse(manifest.bytes, name) as { config?: Descriptor; layers?: Descriptor[] };
  if (body.config === undefined || !Array.isArray(body.layers))
    throw new SvcError('image_build_failed', `the manifest of the base image ${name} has no config or layers`);
  const config = JSON.parse((await client.getBlob(reference.repository, body.config.digest)).toString('utf8')) as ImageConfig;
  const wanted = platform.split('/')[1];
  if (config.architecture !== undefined && config.architecture !== wanted) {
    throw new SvcError('image_build_failed', `the base image ${name} is for ${config.os ?? '?'}/${config.architecture}, not ${platform}`, {
      hint: 'Pick a base image built for the platform your Nomad clients run (imagePlatform, SVC_IMAGE_PLATFORM).',
    });
  }
  if (!Array.isArray(config.rootfs?.diff_ids) || config.rootfs.diff_ids.length !== body.layers.length) {
    throw new SvcError(
      'image_build_failed',
      `the base image ${name} is inconsistent: its config lists ${config.rootfs?.diff_ids?.length ?? 0} layers, its manifest ${body.layers.length}`,
    );
  }
  return {
    reference,
    digest: manifest.digest,
    format: manifest.mediaType === OCI_MANIFEST ? 'oci' : 'docker',
    layers: body.layers,
    config,
  };
}

function pickPlatform(index: unknown, platform: Platform, name: string): Descriptor {
  const [os, architecture] = platform.split('/');
  const entries = ((index as { manifests?: unknown }).manifests ?? []) as (Descriptor & {
    platform?: { os?: string; architecture?: string };
  })[];
  const found = entries.find((entry) => entry.platform?.os === os && entry.platform?.architecture === architecture);
  if (found === undefined) {
    const offered = entries.map((entry) => `${entry.platform?.os}/${entry.platform?.architecture}`).join(', ');
    throw new SvcError('image_build_failed', `the base image ${name} has no ${platform} variant (it has: ${offered || 'none'})`, {
      hint: "Pick a base image built for your Nomad clients' platform, or set imagePlatform (SVC_IMAGE_PLATFORM).",
    });
  }
  return found;
}

function parse(bytes: Buffer, name: string): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new SvcError('image_build_failed', `the registry sent a manifest of ${name} that is not JSON`);
  }
}
