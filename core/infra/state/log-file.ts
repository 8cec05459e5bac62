/**
 * The append-only state log on disk: opened (created whole, or replayed and
 * cut back to its last whole record), appended to with one synchronous write
 * per batch (O_DSYNC: the write returns once its data is durable, as a write
 * and an fdatasync would, in one call instead of two), and compacted by writing the live state to a temp
 * file, syncing it, renaming it over the log and syncing the directory.
 */
import { constants } from 'node:fs';
import { open, rm, rename, type FileHandle } from 'node:fs/promises';
import { SvcError } from '../../model/errors.js';
import { diskFull, freeBytes, isOutOfSpace } from '../files/disk-full.js';
import path from 'node:path';
import type { StateImage, StateRecord } from './image.js';
import type { Persistence } from './kv-store.js';
import { encodeFileHeader, encodeRecord, RECORD_HEADER_BYTES } from './log-codec.js';
import { replayLog } from './log-reader.js';
import { syncDirectory, writeAll } from './fs-sync.js';
import { pathExists } from '../files/path-exists.js';

export const LOG_FILE = 'state.log';
const COMPACTING_FILE = 'state.log.compacting';
export const DEFAULT_COMPACT_AT_BYTES = 8 * 1024 * 1024;
/** Appends are durable when each write returns. */
const APPEND_FLAGS = constants.O_RDWR | constants.O_DSYNC;

export interface OpenedLog {
  readonly log: LogFile;
  readonly image: StateImage;
  readonly warnings: string[];
}

export class LogFile implements Persistence {
  readonly #dir: string;
  readonly #file: string;
  readonly #compactAtBytes: number;
  readonly #warn: (message: string) => void;
  #handle: FileHandle;
  #length: number;
  /** Log length past which the next commit weighs compaction. */
  #nextCheckAt: number;
  #makeRoom: (() => Promise<number>) | null = null;

  private constructor(dir: string, handle: FileHandle, length: number, compactAtBytes: number, warn: (message: string) => void) {
    this.#dir = dir;
    this.#file = path.join(dir, LOG_FILE);
    this.#handle = handle;
    this.#length = length;
    this.#compactAtBytes = compactAtBytes;
    // A long log from an earlier run is weighed at the first write.
    this.#nextCheckAt = compactAtBytes;
    this.#warn = warn;
  }

  /** Opens (or creates) `<dir>/state.log`; `dir` must exist. Throws `state_corrupt` on damage. */
  static async open(dir: string, compactAtBytes: number, warn: (message: string) => void): Promise<OpenedLog> {
    const file = path.join(dir, LOG_FILE);
    // A compaction that a crash interrupted before its rename: the log itself is whole.
    await rm(path.join(dir, COMPACTING_FILE), { force: true });
    if (!(await pathExists(file))) await writeWholeFile(dir, file, [{ kind: 'index', index: 1 }]);
    const replayed = await replayLog(file);
    const warnings: string[] = [];
    const handle = await open(file, APPEND_FLAGS);
    try {
      if (replayed.tornTail !== null) {
        // Cut it off before appending, or the next records would follow garbage.
        await handle.truncate(replayed.validLength);
        await handle.sync();
        warnings.push(
          `${file}: dropped an incomplete last record (${replayed.tornTail.bytes} bytes at byte ${replayed.tornTail.offset}): ` +
            'a write cut short by a crash, never acknowledged',
        );
      }
    } catch (error) {
      await handle.close();
      throw error;
    }
    return { log: new LogFile(dir, handle, replayed.validLength, compactAtBytes, warn), image: replayed.image, warnings };
  }

  get length(): number {
    return this.#length;
  }

  async write(records: readonly StateRecord[]): Promise<void> {
    const bytes = Buffer.concat(records.map(encodeRecord));
    try {
      await writeAll(this.#handle, bytes, this.#length);
    } catch (error) {
      const refusal = await this.#refused(error);
      // A full disk: what svc can let go of first (older log segments), then the same write once more.
      if (!isDiskFull(refusal) || this.#makeRoom === null || (await this.#makeRoom().catch(() => 0)) <= 0) throw refusal;
      try {
        await writeAll(this.#handle, bytes, this.#length);
      } catch (again) {
        throw await this.#refused(again);
      }
    }
    this.#length += bytes.length;
  }

  /** What frees space when the disk is full (svc's older log segments), tried before a write is refused; its bytes freed. */
  makeRoomWith(makeRoom: () => Promise<number>): void {
    this.#makeRoom = makeRoom;
  }

  /**
   * What a failed append leaves the store. A disk out of space refuses a write before its data is
   * anywhere (nothing was made durable, so nothing can have been lost): the log is cut back to its
   * last whole record and synced, and the batch is refused with `disk_full`; the next batch is
   * written as if this one had never been tried. Anything else (an I/O error, or the cut itself
   * failing) leaves the file's state unknown: the error stands, and the store takes no more writes.
   */
  async #refused(error: unknown): Promise<unknown> {
    if (!isOutOfSpace(error)) return error;
    try {
      await this.#handle.truncate(this.#length);
      await this.#handle.sync();
    } catch {
      return error;
    }
    return diskFull(this.#file, await freeBytes(this.#dir));
  }

  /** Compacts when the log has passed the threshold and is more than twice the live state. */
  async afterCommit(image: StateImage): Promise<void> {
    if (this.#length <= this.#nextCheckAt) return;
    const live = liveBytes(image);
    if (this.#length > 2 * live) await this.compact(image);
    else this.#nextCheckAt = Math.max(this.#compactAtBytes, 2 * live);
  }

  /** Rewrites the log as the live state only. Until the rename the old log stays the truth. */
  async compact(image: StateImage): Promise<void> {
    const records = compactedRecords(image);
    const temp = path.join(this.#dir, COMPACTING_FILE);
    let length: number;
    try {
      length = await writeSyncedFile(temp, records);
    } catch (error) {
      // Nothing changed on disk but a temp file: keep appending to the old log and try again later.
      await rm(temp, { force: true });
      this.#nextCheckAt = 2 * this.#length;
      this.#warn(`could not compact ${this.#file} (${(error as Error).message}); it keeps growing until the next try`);
      return;
    }
    await rename(temp, this.#file);
    await syncDirectory(this.#dir);
    await this.#handle.close();
    this.#handle = await open(this.#file, APPEND_FLAGS);
    this.#length = length;
    this.#nextCheckAt = Math.max(this.#compactAtBytes, 2 * length);
  }

  async close(): Promise<void> {
    await this.#handle.close();
  }
}

/** The live state as records: the first index, each live key in the order it was last written, the current index. */
export function compactedRecords(image: StateImage): StateRecord[] {
  const live = [...image.entries()].sort((a, b) => a.modifyIndex - b.modifyIndex);
  return [
    { kind: 'index', index: 1 },
    ...live.map(
      (entry): StateRecord => ({
        kind: 'put',
        index: entry.modifyIndex,
        createIndex: entry.createIndex,
        key: entry.key,
        value: entry.value,
      }),
    ),
    { kind: 'index', index: image.index },
  ];
}

/** Creates `file` holding exactly `records`, atomically: temp file, fsync, rename, directory fsync. */
export async function writeWholeFile(dir: string, file: string, records: readonly StateRecord[]): Promise<void> {
  const temp = path.join(dir, COMPACTING_FILE);
  await writeSyncedFile(temp, records);
  await rename(temp, file);
  await syncDirectory(dir);
}

async function writeSyncedFile(file: string, records: readonly StateRecord[]): Promise<number> {
  const bytes = Buffer.concat([encodeFileHeader(), ...records.map(encodeRecord)]);
  const handle = await open(file, 'w', 0o600);
  try {
    await writeAll(handle, bytes, 0);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return bytes.length;
}

/** About what a compacted log of `image` takes (record framing plus key and value). */
function liveBytes(image: StateImage): number {
  let bytes = 0;
  for (const entry of image.entries()) bytes += RECORD_HEADER_BYTES + 19 + Buffer.byteLength(entry.key) + entry.value.length;
  return bytes;
}

function isDiskFull(error: unknown): boolean {
  return error instanceof SvcError && error.code === 'disk_full';
}
