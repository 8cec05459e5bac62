/**
 * svc's own layers (the runtime, an image's packages), built once per content
 * key and kept in `<cacheDir>/oci/`: the gzip'd blob under its digest and a
 * small record of its digests under the key. A record is written only after
 * its blob is complete, so a record always names a whole blob.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, rename } from 'node:fs/promises';
import path from 'node:path';
import { replaceFile } from '../../files/replace-file.js';
import { removeAbandonedBuilds, temporaryPath } from '../cache-entries.js';
import { writeLayer, type LayerBlob } from './tar-layer.js';

export class LayerCache {
  constructor(readonly root: string) {}

  get blobs(): string {
    return path.join(this.root, 'blobs');
  }

  /** Where a blob with this digest is (or goes). */
  blobFile(digest: string): string {
    return path.join(this.blobs, `${digest.replace(':', '-')}`);
  }

  async find(key: string): Promise<LayerBlob | null> {
    try {
      const record = JSON.parse(await readFile(this.recordFile(key), 'utf8')) as Omit<LayerBlob, 'file'>;
      const file = this.blobFile(record.digest);
      return existsSync(file) ? { ...record, file } : null;
    } catch {
      return null;
    }
  }

  /** Fills a temporary folder with `fill`, tars it as `/<under>`, records it under `key`. */
  async build(key: string, under: string, fill: (dir: string) => Promise<void>): Promise<LayerBlob> {
    await mkdir(this.blobs, { recursive: true });
    await removeAbandonedBuilds(this.root);
    await removeAbandonedBuilds(this.blobs);
    // Keys are `<kind>-<hex>`: a name the sweeper of abandoned builds recognises.
    const dir = temporaryPath(this.root, `layer-${key}`);
    const tarball = temporaryPath(this.blobs, `layer-${key}`);
    try {
      await mkdir(dir);
      await fill(dir);
      const blob = await writeLayer(dir, under, tarball);
      const file = this.blobFile(blob.digest);
      await rename(tarball, file);
      const record = { digest: blob.digest, diffId: blob.diffId, size: blob.size };
      await replaceFile(this.recordFile(key), JSON.stringify(record));
      return { ...record, file };
    } finally {
      await rm(dir, { recursive: true, force: true });
      await rm(tarball, { force: true });
    }
  }

  private recordFile(key: string): string {
    return path.join(this.root, 'layers', `${key}.json`);
  }
}
