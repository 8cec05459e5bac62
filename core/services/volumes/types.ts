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
