/**
 * Volumes kept as folders of this server's disk, `<root>/<workspace>/<volume>/`: the embedded default's,
 * and Nomad's dynamic host volumes (the nodes that see svc's data dir mount the same folder).
 *
 * A volume's size is the sum of its files' sizes, walked file by file. Each size walked is kept, with what
 * this server's own uploads add and replace since, for callers that accept a size of some age (the room an
 * upload has: walking a volume of 10 000 files before each of 10 000 uploads into it made `svc volume put`
 * of a folder quadratic, 4 files a second by the 6 000th here). Removals forget it; containers' writes are
 * seen by the next walk.
 */
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { SvcError } from '../../model/errors.js';
import { listEntries, openFile, removePath, usedBytes, writeFile } from './folder-files.js';
import type { EntriesListing, EntriesPage, OpenedFile, PickBytes, VolumeEntry, VolumePlace, VolumeStorage } from './types.js';

export class FolderStorage implements VolumeStorage {
  readonly #root: string;
  readonly #clock: () => number;
  /** The last size walked of each volume (`<workspace>/<volume>`), when, and with this server's uploads since. */
  readonly #sizes = new Map<string, { bytes: number; walkedAt: number }>();
  /** The walks under way of each volume, each told what this server's uploads changed meanwhile (it may or may not have seen them). */
  readonly #walking = new Map<string, Set<{ added: number }>>();

  /** `root`: `<dataDir>/volumes`, a folder per workspace, a folder per volume in it. */
  constructor(root: string, clock: () => number = Date.now) {
    this.#root = root;
    this.#clock = clock;
  }

  async create(workspace: string, volume: string): Promise<void> {
    await mkdir(this.#folder(workspace, volume), { recursive: true });
  }

  async delete(workspace: string, volume: string): Promise<void> {
    this.#sizes.delete(`${workspace}/${volume}`);
    await rm(this.#folder(workspace, volume), { recursive: true, force: true });
  }

  list(at: VolumePlace, recursive: boolean, page: EntriesPage): Promise<EntriesListing> {
    return listEntries(this.#folder(at.workspace, at.volume), at.volume, at.parts, recursive, page);
  }

  async write(at: VolumePlace, body: Readable, room: number, full: (written: number) => SvcError): Promise<VolumeEntry> {
    const { entry, replacedBytes } = await writeFile(this.#folder(at.workspace, at.volume), at.volume, at.parts, body, room, full);
    const key = `${at.workspace}/${at.volume}`;
    const known = this.#sizes.get(key);
    if (known !== undefined) known.bytes += entry.size - replacedBytes;
    for (const walk of this.#walking.get(key) ?? []) walk.added += entry.size; // too large, if anything: an upload re-measures before it is refused
    return entry;
  }

  open(at: VolumePlace, pick?: PickBytes): Promise<OpenedFile> {
    return openFile(this.#folder(at.workspace, at.volume), at.volume, at.parts, pick);
  }

  async remove(at: VolumePlace, recursive: boolean): Promise<void> {
    this.#sizes.delete(`${at.workspace}/${at.volume}`); // a folder's bytes are not known without a walk
    await removePath(this.#folder(at.workspace, at.volume), at.volume, at.parts, recursive);
  }

  async usedBytes(workspace: string, volumes: readonly string[], maxAgeMs = 0): Promise<Map<string, number>> {
    const sizes = await Promise.all(volumes.map(async (volume) => [volume, await this.#sizeOf(workspace, volume, maxAgeMs)] as const));
    return new Map(sizes);
  }

  async #sizeOf(workspace: string, volume: string, maxAgeMs: number): Promise<number> {
    const key = `${workspace}/${volume}`;
    const known = this.#sizes.get(key);
    if (known !== undefined && maxAgeMs > 0 && this.#clock() - known.walkedAt <= maxAgeMs) return known.bytes;
    const walkedAt = this.#clock();
    const during = { added: 0 };
    const walks = this.#walking.get(key) ?? new Set();
    this.#walking.set(key, walks.add(during));
    let bytes: number;
    try {
      bytes = await usedBytes(this.#folder(workspace, volume));
    } finally {
      walks.delete(during);
      if (walks.size === 0) this.#walking.delete(key);
    }
    this.#sizes.set(key, { bytes: bytes + during.added, walkedAt });
    return bytes;
  }

  mountSource(workspace: string, volume: string): string {
    return this.#folder(workspace, volume);
  }

  #folder(workspace: string, volume: string): string {
    return path.join(this.#root, workspace, volume);
  }
}
