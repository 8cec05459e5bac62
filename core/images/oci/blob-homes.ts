/**
 * Which repository of the push registry holds each blob svc pushed or
 * mounted there, kept in the cache dir across restarts: a new image's
 * repository then mounts the shared layers (base, runtime) from there
 * instead of receiving them again. A wrong entry costs one refused mount.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

export class BlobHomes {
  private homes: Map<string, string> | null = null;
  private readonly file: string;
  /** Writes one after another, each with the whole map. */
  private saving: Promise<void> = Promise.resolve();

  constructor(root: string, registryHost: string) {
    this.file = path.join(root, 'homes', `${createHash('sha256').update(registryHost).digest('hex').slice(0, 16)}.json`);
  }

  async get(digest: string): Promise<string | undefined> {
    return (await this.load()).get(digest);
  }

  async set(digest: string, repository: string): Promise<void> {
    const homes = await this.load();
    if (homes.get(digest) === repository) return;
    homes.set(digest, repository);
    // A hint only: a failed write costs a later upload, never the build.
    this.saving = this.saving.then(() => this.save()).catch(() => {});
    await this.saving;
  }

  private async load(): Promise<Map<string, string>> {
    if (this.homes !== null) return this.homes;
    let entries: [string, string][] = [];
    try {
      const value = JSON.parse(await readFile(this.file, 'utf8')) as unknown;
      if (value !== null && typeof value === 'object') entries = Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
    } catch {
      // None yet, or unreadable: every blob is then looked up in the image's own repository only.
    }
    this.homes ??= new Map(entries);
    return this.homes;
  }

  private async save(): Promise<void> {
    await mkdir(path.dirname(this.file), { recursive: true });
    // Two builders in one process may share the file: each write has its own temporary name.
    const tmp = `${this.file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    await writeFile(tmp, JSON.stringify(Object.fromEntries(this.homes ?? [])));
    await rename(tmp, this.file);
  }
}
