/** Images read from an OCI image layout folder: the manifest whose `org.opencontainers.image.ref.name` is the image (or its tag). */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseImageReference } from './image-reference.js';
import { isIndex, pickPlatform, type ImageSource, type OciImageConfig, type PulledImage } from './image-source.js';

const REF_NAME = 'org.opencontainers.image.ref.name';

export class OciLayoutImageSource implements ImageSource {
  constructor(private readonly layoutDir: string) {}

  private blob(digest: string): string {
    return path.join(this.layoutDir, 'blobs', ...digest.split(':'));
  }

  private json(digest: string): any {
    return JSON.parse(readFileSync(this.blob(digest), 'utf8'));
  }

  async pull(image: string): Promise<PulledImage> {
    const ref = parseImageReference(image);
    const index = JSON.parse(readFileSync(path.join(this.layoutDir, 'index.json'), 'utf8'));
    const entry = (index.manifests ?? []).find((m: any) => {
      const name = m.annotations?.[REF_NAME];
      return name === image || name === ref.tag || (ref.digest !== null && m.digest === ref.digest);
    });
    if (!entry) throw new Error(`manifest unknown: ${image} is not in ${this.layoutDir}`);
    let manifest = this.json(entry.digest);
    if (isIndex(manifest.mediaType ?? entry.mediaType)) manifest = this.json(pickPlatform(manifest));
    const config = this.json(manifest.config.digest) as OciImageConfig;
    return { config, layers: (manifest.layers as Array<{ digest: string }>).map((l) => this.blob(l.digest)) };
  }
}
