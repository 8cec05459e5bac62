/**
 * svc volumes kept as Nomad CSI volumes (config `nomadCsiPlugin`): the volume is created (with its
 * keeper, volume-keepers.ts) and deleted through Nomad with the operator's plugin (csi-volumes.ts), containers mount it wherever Nomad places
 * them (jobs/volumes.ts), and its files go in and out through its keeper (volume-keepers.ts,
 * core/infra/volumes/keeper-client.ts).
 */
import type { Readable } from 'node:stream';
import { nomadVolumeName } from '../../../../jobs/names.js';
import type { SvcError } from '../../../model/errors.js';
import { KeeperFiles } from '../../volumes/keeper-client.js';
import type { EntriesListing, EntriesPage, OpenedFile, PickBytes, VolumeEntry, VolumePlace, VolumeStorage } from '../../volumes/types.js';
import type { NomadClient } from './client.js';
import { type CsiVolumeOptions, deleteCsiVolume, ensureCsiVolume } from './csi-volumes.js';
import type { VolumeKeepers } from './volume-keepers.js';

/** How long a volume's size read from its keeper stands for it. */
const SIZE_TTL_MS = 10_000;

export class CsiStorage implements VolumeStorage {
  readonly #client: Pick<NomadClient, 'get' | 'put' | 'delete' | 'namespace'>;
  readonly #keepers: VolumeKeepers;
  readonly #csi: CsiVolumeOptions;
  readonly #files: KeeperFiles;
  /** The last size read of each volume, by `<workspace>/<volume>`. */
  readonly #sizes = new Map<string, { readonly bytes: number; readonly at: number }>();
  /** The size read under way of each volume, by `<workspace>/<volume>`. */
  readonly #reading = new Map<string, Promise<number>>();

  constructor(client: Pick<NomadClient, 'get' | 'put' | 'delete' | 'namespace'>, keepers: VolumeKeepers, csi: CsiVolumeOptions) {
    this.#client = client;
    this.#keepers = keepers;
    this.#csi = csi;
    this.#files = new KeeperFiles(keepers);
  }

  /**
   * Creates the CSI volume and starts its keeper, so that a plugin or node that cannot serve it is said at
   * once. A keeper that does not start removes the CSI volume and keeper job again when this call made the
   * volume; one that was there already (another replica's create, a volume left without its record) is kept.
   */
  async create(workspace: string, volume: string): Promise<void> {
    const made = await ensureCsiVolume(this.#client, this.#csi, workspace, volume);
    try {
      await this.#keepers.find(workspace, volume);
    } catch (error) {
      if (made) await this.delete(workspace, volume).catch(() => {}); // what is left is adopted by the next create
      throw error;
    }
  }

  async delete(workspace: string, volume: string): Promise<void> {
    await this.#keepers.deleting(workspace, volume, async () => {
      await deleteCsiVolume(this.#client, workspace, volume);
      this.#sizes.delete(`${workspace}/${volume}`);
    });
  }

  list(at: VolumePlace, recursive: boolean, page: EntriesPage): Promise<EntriesListing> {
    return this.#files.list(at, recursive, page);
  }

  async write(at: VolumePlace, body: Readable, room: number, full: (written: number) => SvcError): Promise<VolumeEntry> {
    const key = `${at.workspace}/${at.volume}`;
    let written: { entry: VolumeEntry; replacedBytes: number };
    try {
      written = await this.#files.write(at, body, room, full);
    } catch (error) {
      this.#sizes.delete(key); // read afresh by the next upload
      throw error;
    }
    const known = this.#sizes.get(key);
    if (known !== undefined) this.#sizes.set(key, { bytes: known.bytes + written.entry.size - written.replacedBytes, at: known.at });
    return written.entry;
  }

  open(at: VolumePlace, pick?: PickBytes): Promise<OpenedFile> {
    return this.#files.open(at, pick);
  }

  async remove(at: VolumePlace, recursive: boolean): Promise<void> {
    try {
      await this.#files.remove(at, recursive);
    } finally {
      this.#sizes.delete(`${at.workspace}/${at.volume}`);
    }
  }

  /**
   * Each volume's size from its keeper (a walk of the whole volume), kept `maxAgeMs` (SIZE_TTL_MS unless
   * asked otherwise) with this server's uploads since counted in: an upload counts the workspace's other
   * volumes too, and should not wait for every keeper each time. A keeper that cannot answer now is taken
   * at its last size, when there is one.
   */
  async usedBytes(workspace: string, volumes: readonly string[], maxAgeMs = SIZE_TTL_MS): Promise<Map<string, number>> {
    const sizes = await Promise.all(volumes.map(async (volume) => [volume, await this.#size(workspace, volume, maxAgeMs)] as const));
    return new Map(sizes);
  }

  async #size(workspace: string, volume: string, maxAgeMs: number): Promise<number> {
    const key = `${workspace}/${volume}`;
    const known = this.#sizes.get(key);
    if (known !== undefined && maxAgeMs > 0 && Date.now() - known.at < maxAgeMs) return known.bytes;
    // One walk at a time per volume: uploads, listings and /metrics that miss the cache together share it.
    let reading = this.#reading.get(key);
    if (reading === undefined) {
      reading = this.#files.usedBytes(workspace, volume).then((bytes) => {
        this.#sizes.set(key, { bytes, at: Date.now() });
        return bytes;
      });
      this.#reading.set(key, reading);
      void reading.finally(() => this.#reading.delete(key)).catch(() => {}); // its callers see its failure
    }
    try {
      return await reading;
    } catch (error) {
      if (known !== undefined) return known.bytes;
      throw error;
    }
  }

  mountSource(workspace: string, volume: string): string {
    return nomadVolumeName(workspace, volume);
  }
}
