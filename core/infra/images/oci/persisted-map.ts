/**
 * A small string map kept in a JSON file of the cache dir across restarts,
 * for hints the OCI builder learns: which repository of the push registry
 * holds each blob (so a new image mounts shared layers instead of receiving
 * them again), the last digest each base image tag had. Losing it costs a
 * request or an upload, never a wrong image; writes are whole-file renames.
 */
import { readFile } from 'node:fs/promises';
import { replaceFile } from '../../files/replace-file.js';

export class PersistedMap {
  private entries: Map<string, string> | null = null;
  /** Writes one after another, each with the whole map. */
  private saving: Promise<void> = Promise.resolve();

  constructor(private readonly file: string) {}

  async get(key: string): Promise<string | undefined> {
    return (await this.load()).get(key);
  }

  async set(key: string, value: string): Promise<void> {
    const entries = await this.load();
    if (entries.get(key) === value) return;
    entries.set(key, value);
    // A hint only: a failed write costs a later upload, never the build.
    this.saving = this.saving.then(() => this.save()).catch(() => {});
    await this.saving;
  }

  private async load(): Promise<Map<string, string>> {
    if (this.entries !== null) return this.entries;
    let read: [string, string][] = [];
    try {
      const value = JSON.parse(await readFile(this.file, 'utf8')) as unknown;
      if (value !== null && typeof value === 'object')
        read = Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
    } catch {
      // None yet, or unreadable: start empty.
    }
    this.entries ??= new Map(read);
    return this.entries;
  }

  private save(): Promise<void> {
    return replaceFile(this.file, JSON.stringify(Object.fromEntries(this.entries ?? [])));
  }
}
