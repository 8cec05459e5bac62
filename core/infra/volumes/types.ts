/**
 * Where a volume's files are kept, and what the volumes service asks of that place: a folder on this
 * server's disk (`folder-storage.ts`, the embedded default and Nomad's host volumes), or a CSI volume
 * on Nomad that only an allocation mounting it can reach (the keeper, `keeper-client.ts`). Paths are
 * already checked as written (core/model/volume-paths.ts); where they lead is checked where the files are.
 */
import type { Readable } from 'node:stream';
import type { SvcError } from '../../model/errors.js';

/** One file or folder of a volume, by its path from the volume's root. */
export interface VolumeEntry {
  readonly path: string;
  /** `link`: a symbolic link a container made; never followed outside the volume. */
  readonly type: 'file' | 'dir' | 'link';
  /** Bytes, for a file; 0 otherwise. */
  readonly size: number;
  readonly modifiedAt: string;
}

/**
 * Which entries of a listing to answer: those that come after the entry `after` in the listing's order
 * (its names from the volume's root, below the folder listed; null from the first), at most `limit`. The
 * entry `after` need not exist any more: a listing paged while files come and go goes on where it was.
 */
export interface EntriesPage {
  readonly after: readonly string[] | null;
  readonly limit: number;
}

/** One page of a listing, sorted by path; `next`: the `after` of the next page, null once there is none. */
export interface EntriesListing {
  readonly entries: VolumeEntry[];
  readonly next: string | null;
}

/** A file opened to stream: its size and version, and a reader of the bytes asked for (`start` to `end`, inclusive; -1 for an empty file). */
export interface OpenedFile {
  readonly size: number;
  /** Changes whenever the file's content may have: its size and last change, quoted as an HTTP entity tag. */
  readonly etag: string;
  readonly start: number;
  readonly end: number;
  readonly stream: Readable;
}

/** Which bytes of the file to read, from its size and entity tag: all of it by default. */
export type PickBytes = (file: { size: number; etag: string }) => { start: number; end: number } | null;

/** A path in one volume of one workspace: `parts` from its root (empty for the root). */
export interface VolumePlace {
  readonly workspace: string;
  readonly volume: string;
  readonly parts: readonly string[];
}

export interface VolumeStorage {
  /** Makes the volume's (empty) place; one that exists already is kept as it is. A failure leaves nothing this call made. */
  create(workspace: string, volume: string): Promise<void>;
  /** Removes the volume's place and every file in it. */
  delete(workspace: string, volume: string): Promise<void>;
  /** What `at` names, a page at a time: a file's entry, or a folder's entries (all below it when `recursive`), sorted by path. */
  list(at: VolumePlace, recursive: boolean, page: EntriesPage): Promise<EntriesListing>;
  /**
   * Writes `body` at `at` (folders made as needed), replacing a file there once all of it arrived; past
   * `room` bytes it fails with `full(written)` and nothing is left behind.
   */
  write(at: VolumePlace, body: Readable, room: number, full: (written: number) => SvcError): Promise<VolumeEntry>;
  /** The file at `at`, to stream: the bytes `pick` chooses (all by default). */
  open(at: VolumePlace, pick?: PickBytes): Promise<OpenedFile>;
  /** Removes the file or folder at `at` (a folder with what it holds only when `recursive`); never the root. */
  remove(at: VolumePlace, recursive: boolean): Promise<void>;
  /**
   * The bytes each of `volumes` of `workspace` holds: measured now (`maxAgeMs` 0), or as measured up to
   * `maxAgeMs` before with this server's own uploads since counted in. Without `maxAgeMs`, the storage's
   * own choice: a folder is measured now, a CSI volume's keeper asked at most every 10 s.
   */
  usedBytes(workspace: string, volumes: readonly string[], maxAgeMs?: number): Promise<Map<string, number>>;
  /** What a unit's containers mount: the volume's folder on this host, or its CSI volume's ID in Nomad. */
  mountSource(workspace: string, volume: string): string;
}
