/**
 * The registry's content, in memory. Blobs, manifests and tags belong to a
 * repository: a blob pushed to `a` is not visible in `b` until pushed or
 * mounted there (distribution links blobs per repository,
 * registry/storage/linkedblobstore.go).
 */
import { createHash } from 'node:crypto';

export interface StoredManifest {
  readonly bytes: Buffer;
  readonly mediaType: string;
}

export class Repository {
  readonly blobs = new Map<string, Buffer>();
  readonly manifests = new Map<string, StoredManifest>();
  readonly tags = new Map<string, string>();
}

export class RegistryStore {
  private readonly repositories = new Map<string, Repository>();

  find(name: string): Repository | undefined {
    return this.repositories.get(name);
  }

  /** The repository, created on first write (distribution has no explicit create). */
  repository(name: string): Repository {
    let repository = this.repositories.get(name);
    if (repository === undefined) {
      repository = new Repository();
      this.repositories.set(name, repository);
    }
    return repository;
  }

  blob(name: string, digest: string): Buffer | undefined {
    return this.find(name)?.blobs.get(digest);
  }

  putBlob(name: string, bytes: Buffer): string {
    const digest = sha256(bytes);
    this.repository(name).blobs.set(digest, bytes);
    return digest;
  }

  putManifest(name: string, bytes: Buffer, mediaType: string, tag?: string): string {
    const digest = sha256(bytes);
    const repository = this.repository(name);
    repository.manifests.set(digest, { bytes, mediaType });
    if (tag !== undefined) repository.tags.set(tag, digest);
    return digest;
  }
}

export function sha256(bytes: Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}
