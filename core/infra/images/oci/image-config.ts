/**
 * The config and manifest of an svc image: the base image's, with svc's
 * layers added on top, the image's own variables, and the environment the
 * runtime needs (its packages on PYTHONPATH, the image's own before the
 * runtime's so they win, as in the venv builder).
 */
import type { BaseImage, Descriptor, ImageConfig } from './base-image.js';
import { formatTypes } from './media-types.js';
import type { LayerBlob } from './tar-layer.js';

export interface SvcLayer {
  readonly blob: LayerBlob;
  /** Where it unpacks in the image: `/opt/svc/runtime`. */
  readonly path: string;
  /** The config's history entry: what made it. */
  readonly createdBy: string;
}

export interface ImageLabels {
  readonly imageId: string;
  readonly pythonVersion: string;
  readonly svcVersion: string;
}

/** `env`: the image's own variables (`Image.env`), over the base's and under svc's (the manifest refuses svc's names). */
export function imageConfig(
  base: BaseImage,
  layers: readonly SvcLayer[],
  labels: ImageLabels,
  env: Readonly<Record<string, string>> = {},
): ImageConfig {
  const config = structuredClone(base.config);
  config.rootfs = { type: 'layers', diff_ids: [...base.config.rootfs.diff_ids, ...layers.map((layer) => layer.blob.diffId)] };
  // `created` stays the base's: the same inputs give the same config, so the same digest.
  const created = base.config.created;
  config.history = [
    ...(base.config.history ?? []),
    ...layers.map((layer) => ({
      ...(created === undefined ? {} : { created }),
      created_by: layer.createdBy,
      comment: `svc ${labels.svcVersion}`,
    })),
  ];
  const inner = { ...(config.config ?? {}) };
  inner.Env = withEnv(withEnv(inner.Env ?? [], env), {
    PYTHONPATH: [...layers]
      .reverse()
      .map((layer) => layer.path)
      .join(':'),
    PYTHONDONTWRITEBYTECODE: '1',
  });
  inner.Labels = {
    ...(inner.Labels ?? {}),
    'dev.svc.image-id': labels.imageId,
    'dev.svc.python-version': labels.pythonVersion,
    'dev.svc.version': labels.svcVersion,
  };
  config.config = inner;
  return config;
}

export function imageManifest(
  base: BaseImage,
  configBytes: Buffer,
  configDigest: string,
  layers: readonly SvcLayer[],
): { bytes: Buffer; mediaType: string } {
  const types = formatTypes(base.format);
  const own: Descriptor[] = layers.map((layer) => ({ mediaType: types.layer, digest: layer.blob.digest, size: layer.blob.size }));
  const manifest = {
    schemaVersion: 2,
    mediaType: types.manifest,
    config: { mediaType: types.config, digest: configDigest, size: configBytes.length },
    layers: [...base.layers.map((layer) => ({ mediaType: layer.mediaType, digest: layer.digest, size: layer.size })), ...own],
  };
  return { bytes: Buffer.from(JSON.stringify(manifest)), mediaType: types.manifest };
}

/** `NAME=value` entries with `values` set (replacing a base image's own). */
function withEnv(env: readonly string[], values: Record<string, string>): string[] {
  const kept = env.filter((entry) => !(entry.split('=')[0]! in values));
  return [...kept, ...Object.entries(values).map(([name, value]) => `${name}=${value}`)];
}
