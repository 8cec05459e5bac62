/**
 * Seeds a repository from an OCI image layout folder (image-spec
 * image-layout.md: `oci-layout`, `index.json`, `blobs/<alg>/<hex>`), as
 * `skopeo copy --all oci:<dir> docker://<registry>/<repo>:<tag>` would:
 * every blob and every manifest, children before the index that lists them.
 * index.json must name one manifest, or one whose
 * `org.opencontainers.image.ref.name` is the tag. Every file read is checked
 * against its digest.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { IMAGE_MANIFEST_TYPES, INDEX_TYPES } from './media-types.js';
import { sha256, type RegistryStore } from './store.js';

interface LayoutDescriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly annotations?: Record<string, string>;
}

interface LayoutManifest {
  readonly config?: LayoutDescriptor;
  readonly layers?: LayoutDescriptor[];
  readonly manifests?: LayoutDescriptor[];
}

const REF_NAME = 'org.opencontainers.image.ref.name';

export async function importLayout(store: RegistryStore, layoutDir: string, repo: string, tag: string): Promise<void> {
  const marker = JSON.parse(await readFile(join(layoutDir, 'oci-layout'), 'utf8')) as { imageLayoutVersion?: unknown };
  if (marker.imageLayoutVersion !== '1.0.0')
    throw new Error(`${layoutDir}: oci-layout imageLayoutVersion must be "1.0.0", got ${JSON.stringify(marker.imageLayoutVersion)}`);
  const index = JSON.parse(await readFile(join(layoutDir, 'index.json'), 'utf8')) as LayoutManifest;
  const entries = index.manifests ?? [];
  const chosen = entries.length === 1 ? entries[0] : entries.find((entry) => entry.annotations?.[REF_NAME] === tag);
  if (chosen === undefined)
    throw new Error(`${layoutDir}: index.json must list one manifest or one with ${REF_NAME}=${tag}, it lists ${entries.length}`);
  const read = (descriptor: LayoutDescriptor): Promise<Buffer> => readBlob(layoutDir, descriptor);
  await copyManifest(store, read, repo, chosen);
  store.repository(repo).tags.set(tag, chosen.digest);
}

/** Puts a manifest's blobs (or an index's manifests, recursively) and then the manifest itself. */
async function copyManifest(
  store: RegistryStore,
  read: (descriptor: LayoutDescriptor) => Promise<Buffer>,
  repo: string,
  descriptor: LayoutDescriptor,
): Promise<void> {
  const bytes = await read(descriptor);
  const manifest = JSON.parse(bytes.toString('utf8')) as LayoutManifest;
  if (INDEX_TYPES.includes(descriptor.mediaType)) {
    for (const child of manifest.manifests ?? []) await copyManifest(store, read, repo, child);
  } else if (IMAGE_MANIFEST_TYPES.includes(descriptor.mediaType)) {
    for (const blob of [...(manifest.config === undefined ? [] : [manifest.config]), ...(manifest.layers ?? [])])
      store.putBlob(repo, await read(blob));
  } else {
    throw new Error(`unsupported manifest media type ${descriptor.mediaType} for ${descriptor.digest}`);
  }
  store.putManifest(repo, bytes, descriptor.mediaType);
}

async function readBlob(layoutDir: string, descriptor: LayoutDescriptor): Promise<Buffer> {
  const match = /^sha256:([a-f0-9]{64})$/.exec(descriptor.digest);
  if (match === null) throw new Error(`unsupported digest ${descriptor.digest} (the stand-in knows sha256 only)`);
  const bytes = await readFile(join(layoutDir, 'blobs', 'sha256', match[1]!));
  if (sha256(bytes) !== descriptor.digest) throw new Error(`blobs/sha256/${match[1]!} does not hash to its name`);
  if (bytes.length !== descriptor.size)
    throw new Error(`${descriptor.digest} has ${bytes.length} bytes, its descriptor says ${descriptor.size}`);
  return bytes;
}
