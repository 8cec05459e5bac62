/**
 * The embedded state store: `<data dir>/state/`, one append-only log with an
 * fsync per batch of writes, locked to one process. See docs/state.md for the
 * format and why an acknowledged write survives kill -9.
 */
import path from 'node:path';
import { copyFile, open } from 'node:fs/promises';
import { makeDurableDirectory, syncDirectory } from './fs-sync.js';
import type { StateImage } from './image.js';
import { KvStore } from './kv-store.js';
import { acquireLock } from './lock-file.js';
import { DEFAULT_COMPACT_AT_BYTES, LOG_FILE, LogFile } from './log-file.js';

export interface FileStoreOptions {
  /** The svc data dir; the store lives in its `state/` folder. */
  readonly dataDir: string;
  /** Compact the log once it passes this size and twice its size after the last compaction (default 8 MiB). */
  readonly compactAtBytes?: number;
  /** Told about problems found after opening (a compaction that failed and will be retried). */
  readonly onWarning?: (message: string) => void;
}

export class FileStateStore extends KvStore {
  /** The state folder, `<data dir>/state`. */
  readonly dir: string;
  /** What opening found and repaired (a stale lock taken over, an unacknowledged torn write dropped). */
  readonly warnings: readonly string[];

  readonly #log: LogFile;

  constructor(dir: string, image: StateImage, log: LogFile, release: () => Promise<void>, warnings: readonly string[]) {
    super(image, {
      write: (records) => log.write(records),
      afterCommit: (current) => log.afterCommit(current),
      close: async () => {
        try {
          await log.close();
        } finally {
          await release();
        }
      },
    });
    this.dir = dir;
    this.warnings = warnings;
    this.#log = log;
  }

  /** What to let go of (svc's older log segments) before a write is refused for a full disk; see LogFile. */
  makeRoomWith(makeRoom: () => Promise<number>): void {
    this.#log.makeRoomWith(makeRoom);
  }

  /** A synced copy of the log as it is now, `state.log.<suffix>` beside it (before a migration changes the state); its path. */
  async copyLog(suffix: string): Promise<string> {
    const copy = path.join(this.dir, `${LOG_FILE}.${suffix}`);
    await copyFile(path.join(this.dir, LOG_FILE), copy);
    const handle = await open(copy, 'r');
    await handle.sync().finally(() => handle.close());
    await syncDirectory(this.dir);
    return copy;
  }
}

/**
 * Opens the store, creating it on first use. Throws `state_locked` when
 * another process has it open and `state_corrupt` when its log is damaged
 * (never starting empty instead).
 */
export async function openFileStateStore(options: FileStoreOptions): Promise<FileStateStore> {
  const dir = path.join(options.dataDir, 'state');
  await makeDurableDirectory(dir);
  const { lock, warnings } = await acquireLock(dir);
  try {
    const warn = options.onWarning ?? ((message: string) => process.emitWarning(message, { code: 'SVC_STATE' }));
    const opened = await LogFile.open(dir, options.compactAtBytes ?? DEFAULT_COMPACT_AT_BYTES, warn);
    return new FileStateStore(dir, opened.image, opened.log, () => lock.release(), [...warnings, ...opened.warnings]);
  } catch (error) {
    await lock.release();
    throw error;
  }
}
