/**
 * Volumes kept as folders of this server's disk, `<root>/<workspace>/<volume>/`: the embedded default's,
 * and Nomad's dynamic host volumes (the nodes that see svc's data dir mount the same folder).
 */
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { SvcError } from '../../model/errors.js';
import { listEntries, openFile, removePath, usedBytes, writeFile } from './folder-files.js';
import type { OpenedFile, PickBytes, VolumeEntry, VolumePlace, VolumeStorage } from './types.js';

export class FolderStorage implements VolumeStorage {
  readonly #root: string;

  /** `root`: `<dataDir>/volumes`, a folder per workspace, a folder per volume in it. */
  constructor(root: string) {
    this.#root = root;
  }

  async create(workspace: string, volume: string): Promise<void> {
    await mkdir(this.#folder(workspace, volume), { recursive: true });
  }

  async delete(workspace: string, volume: string): Promise<void> {
    await rm(this.#folder(workspace, volume), { recursive: true, force: true });
  }

  list(at: VolumePlace, recursive: boolean): Promise<VolumeEntry[]> {
    return listEntries(this.#folder(at.workspace, at.volume), at.volume, at.parts, recursive);
  }

  write(at: VolumePlace, body: Readable, room: number, full: (written: number) => SvcError): Promise<VolumeEntry> {
    return writeFile(this.#folder(at.workspace, at.volume), at.volume, at.parts, body, room, full);
  }

  open(at: VolumePlace, pick?: PickBytes): Promise<OpenedFile> {
    return openFile(this.#folder(at.workspace, at.volume), at.volume, at.parts, pick);
  }

  remove(at: VolumePlace, recursive: boolean): Promise<void> {
    return removePath(this.#folder(at.workspace, at.volume), at.volume, at.parts, recursive);
  }

  async usedBytes(workspace: string, volumes: readonly string[]): Promise<Map<string, number>> {
    const sizes = await Promise.all(volumes.map(async (volume) => [volume, await usedBytes(this.#folder(workspace, volume))] as const));
    return new Map(sizes);
  }

  mountSource(workspace: string, volume: string): string {
    return this.#folder(workspace, volume);
  }

  #folder(workspace: string, volume: string): string {
    return path.join(this.#root, workspace, volume);
  }
}
