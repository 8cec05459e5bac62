/** Volumes: named folders of files that a workspace keeps on the server, outside any container. */

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
  /** Bytes its files hold now. */
  readonly bytes: number;
  /** The most it may hold (the operator's `volumeMaxBytes`). */
  readonly maxBytes: number;
}

/** A volume as the API answers it: the view, and who mounts it (core/services/volumes/mounted-by.ts). */
export interface VolumeAnswer extends VolumeView {
  /** `<app>/<workload>` of each deployed workload, and `run <id> (<function>)` of each run, that mounts it. */
  readonly mountedBy: readonly string[];
}

/** One file or folder of a volume, by its path from the volume's root. */
export interface VolumeEntry {
  readonly path: string;
  /** `link`: a symbolic link a container made; never followed outside the volume. */
  readonly type: 'file' | 'dir' | 'link';
  /** Bytes, for a file; 0 otherwise. */
  readonly size: number;
  readonly modifiedAt: string;
}

/** The operator's bounds (config `volumeMaxBytes`, `workspaceVolumeBytes`). */
export interface VolumeLimits {
  /** The most one volume may hold. */
  readonly volumeMaxBytes: number;
  /** The most all of a workspace's volumes may hold together. */
  readonly workspaceMaxBytes: number;
}

/** What deploys and runs ask of volumes: that a workload's exist in its workspace, and where their files are on this host. */
export interface VolumeMounting {
  /** `volume_not_found` (422) naming each of `names` the workspace lacks (another workspace's too). */
  check(workspace: string, names: readonly string[]): Promise<void>;
  /** The folder of a volume's files on this host, which a container mounts. */
  hostPath(workspace: string, name: string): string;
}
