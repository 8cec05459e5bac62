import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { sharedBuild } from '../shared-builds.js';
import type { BuildLog } from '../types.js';
import type { BaseImage } from './base-image.js';
import type { SvcLayer } from './image-config.js';
import type { LayerCache } from './layer-cache.js';
import type { PersistedMap } from './persisted-map.js';
import type { RegistryClient } from './registry-client.js';

/**
 * Puts an image's layers into its repository of the push registry, each at
 * most once: a blob the repository has is skipped, one another repository
 * of the registry holds is mounted from there, and only the rest is sent
 * (base layers downloaded first into svc's cache).
 */
export class BlobPusher {
  constructor(
    private readonly target: RegistryClient,
    private readonly registryHost: string,
    /** A repository of the push registry known to hold each blob: other images mount it from there. */
    private readonly homes: PersistedMap,
    private readonly layers: LayerCache,
  ) {}

  /** The base's layers, read from `source` (the base's registry) when the push registry lacks them. */
  async copyBaseLayers(base: BaseImage, source: RegistryClient, repository: string, emit: BuildLog): Promise<void> {
    const sameRegistry = base.reference.host === this.registryHost;
    for (const layer of base.layers) {
      if (await this.alreadyThere(repository, layer.digest, sameRegistry ? base.reference.repository : null)) continue;
      const file = this.layers.blobFile(layer.digest);
      // Two images on one base, built at once, download each of its layers once.
      await sharedBuild(`oci-blob:${file}`, emit, async (log) => {
        if (existsSync(file)) return;
        log(`downloading base layer ${layer.digest} (${megabytes(layer.size)})`);
        await mkdir(this.layers.blobs, { recursive: true });
        await source.downloadBlob(base.reference.repository, layer.digest, file);
      });
      emit(`pushing base layer ${layer.digest} (${megabytes(layer.size)})`);
      await this.target.uploadBlob(repository, { digest: layer.digest, size: layer.size, file });
      await this.remember(layer.digest, repository);
    }
  }

  async pushLayer(repository: string, layer: SvcLayer, emit: BuildLog): Promise<void> {
    if (await this.alreadyThere(repository, layer.blob.digest, null)) return;
    emit(`pushing layer ${layer.path} ${layer.blob.digest} (${megabytes(layer.blob.size)})`);
    await this.target.uploadBlob(repository, layer.blob);
    await this.remember(layer.blob.digest, repository);
  }

  /**
   * True when the blob is in `repository` already or could be mounted there from a repository of
   * the push registry that holds it (the base's, or another image's pushed by this builder).
   */
  private async alreadyThere(repository: string, digest: string, from: string | null): Promise<boolean> {
    if (await this.target.hasBlob(repository, digest)) return this.remember(digest, repository);
    for (const source of new Set([from, await this.homes.get(digest)])) {
      if (source === null || source === undefined || source === repository) continue;
      if (await this.target.mountBlob(repository, digest, source)) return this.remember(digest, repository);
    }
    return false;
  }

  private async remember(digest: string, repository: string): Promise<true> {
    await this.homes.set(digest, repository);
    return true;
  }
}

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
