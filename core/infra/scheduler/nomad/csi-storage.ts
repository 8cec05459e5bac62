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
import type { OpenedFile, PickBytes, VolumeEntry, VolumePlace, VolumeStorage } from '../../volumes/types.js';
import type { NomadClient } from './client.js';
import { deleteCsiVolume } from './csi-volumes.js';
import type { VolumeKeepers } from './volume-keepers.js';

export class CsiStorage implements VolumeStorage {
  readonly kind = 'csi';
  readonly #client: Pick<NomadClient, 'get' | 'put' | 'delete' | 'namespace'>;
  readonly #keepers: VolumeKeepers;
  readonly #files: KeeperFiles;

  constructor(client: Pick<NomadClient, 'get' | 'put' | 'delete' | 'namespace'>, keepers: VolumeKeepers) {
    this.#client = client;
    this.#keepers = keepers;
    this.#files = new KeeperFiles(keepers);
  }

  /** Creates the CSI volume and starts its keeper, so that a plugin or node that cannot serve it is said at once. */
  async create(workspace: string, volume: string): Promise<void> {
    await this.#keepers.find(workspace, volume);
  }

  async delete(workspace: string, volume: string): Promise<void> {
    await this.#keepers.stop(workspace, volume);
    await deleteCsiVolume(this.#client, workspace, volume);
  }

  list(at: VolumePlace, recursive: boolean): Promise<VolumeEntry[]> {
    return this.#files.list(at, recursive);
  }

  write(at: VolumePlace, body: Readable, room: number, full: (written: number) => SvcError): Promise<VolumeEntry> {
    return this.#files.write(at, body, room, full);
  }

  open(at: VolumePlace, pick?: PickBytes): Promise<OpenedFile> {
    return this.#files.open(at, pick);
  }

  remove(at: VolumePlace, recursive: boolean): Promise<void> {
    return this.#files.remove(at, recursive);
  }

  async usedBytes(workspace: string, volumes: readonly string[]): Promise<Map<string, number>> {
    const sizes = await Promise.all(volumes.map(async (volume) => [volume, await this.#files.usedBytes(workspace, volume)] as const));
    return new Map(sizes);
  }

  mountSource(workspace: string, volume: string): string {
    return nomadVolumeName(workspace, volume);
  }
}
