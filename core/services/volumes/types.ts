/** Volumes: named folders of files that a workspace keeps on the server, outside any container. */
import type { EntriesListing, VolumeEntry } from '../../infra/volumes/types.js';

export type { EntriesListing, VolumeEntry };

/** A page of a listing, as the API asks for it: after which entry (its path, a page's `next`; null from the first), how many at most. */
export interface ListPage {
  readonly after: string | null;
  readonly limit: number;
}

/** What the state store keeps of a volume (its files are on disk, in the server's data dir). */
export interface VolumeRecord {
  readonly name: string;
  readonly workspace: string;
  readonly createdAt: string;
  /** A token's or member's id; null for svc itself. */
  readonly createdBy: string | null;
}

/** A volume as the API answers it. */
export interface VolumeView {
  readonly name: string;
  readonly createdAt: string;
  /** Bytes its files hold now; null when they cannot be read now (`bytesError` says why). */
  readonly bytes: number | null;
  /** Why `bytes` is null (a CSI volume whose keeper does not answer yet); absent when it is not. */
  readonly bytesError?: string;
  /** The most it may hold (the operator's `volumeMaxBytes`). */
  readonly maxBytes: number;
}

/** A volume as the API answers it: the view, and who mounts it (core/services/volumes/mounted-by.ts). */
export interface VolumeAnswer extends VolumeView {
  /** `<app>/<workload>` of each deployed workload, and `run <id> (<function>)` of each run, that mounts it. */
  readonly mountedBy: readonly string[];
}

/** The operator's bounds (config `volumeMaxBytes`, `workspaceVolumeBytes`). */
export interface VolumeLimits {
  /** The most one volume may hold. */
  readonly volumeMaxBytes: number;
  /** The most all of a workspace's volumes may hold together. */
  readonly workspaceMaxBytes: number;
}

/** What deploys and runs ask of volumes: that a workload's exist in its workspace, and what their containers mount. */
export interface VolumeMounting {
  /** `volume_not_found` (422) naming each of `names` the workspace lacks (another workspace's too). */
  check(workspace: string, names: readonly string[]): Promise<void>;
  /** What a container mounts: the volume's folder on this host, or its CSI volume's ID in Nomad. */
  mountSource(workspace: string, name: string): string;
}
