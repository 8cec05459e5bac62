/**
 * The embedded store's state as one self-contained log, for backups: read from the log on disk
 * while svc may be appending to it (the log only grows, and a compaction replaces it by rename,
 * so the bytes read are always a log; replaying them and dropping an unfinished last append gives
 * the state at one index), and written back as the log of a new store.
 */
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SvcError } from '../../model/errors.js';
import { makeDurableDirectory } from './fs-sync.js';
import type { StateImage } from './image.js';
import { acquireLock } from './lock-file.js';
import { encodeFileHeader, encodeRecord } from './log-codec.js';
import { compactedRecords, LOG_FILE, writeWholeFile } from './log-file.js';
import { replayLog } from './log-reader.js';
import { pathExists } from '../files/path-exists.js';

export interface StateSnapshot {
  /** A whole state log holding the live state only (compacted). */
  readonly bytes: Buffer;
  /** The store's index at the snapshot: every write acknowledged up to it is in. */
  readonly index: number;
  /** Its keys, for what a backup says it holds. */
  readonly keys: readonly string[];
}

/** The state of the store in `stateDir` now; `state_corrupt` when its log is damaged, `not_found` when there is none. */
export async function snapshotState(stateDir: string): Promise<StateSnapshot> {
  const file = path.join(stateDir, LOG_FILE);
  if (!(await pathExists(file))) throw new SvcError('not_found', `there is no state log at ${file}: nothing to back up.`);
  const { image } = await replayLog(file);
  return snapshotOf(image);
}

function snapshotOf(image: StateImage): StateSnapshot {
  const records = compactedRecords(image);
  return {
    bytes: Buffer.concat([encodeFileHeader(), ...records.map(encodeRecord)]),
    index: image.index,
    keys: [...image.entries()].map((entry) => entry.key),
  };
}

/**
 * Makes `stateDir` the store of a snapshot's log (from `source`, for messages), checked whole first
 * (`state_corrupt` naming what is wrong), holding the store's lock meanwhile. Refuses (`conflict`) when `stateDir` has a log
 * already: a restore never replaces state.
 */
export async function installState(stateDir: string, bytes: Buffer, source: string): Promise<StateSnapshot> {
  await makeDurableDirectory(stateDir);
  const { lock } = await acquireLock(stateDir);
  try {
    const file = path.join(stateDir, LOG_FILE);
    if (await pathExists(file)) {
      throw new SvcError('conflict', `${stateDir} already holds a state log: a restore goes into an empty data dir.`, {
        hint: 'Give --data-dir (or SVC_DATA_DIR) a new folder, or move this one away first.',
      });
    }
    // Checked as svc will open it: a damaged or cut-short log is refused, never installed.
    const candidate = path.join(stateDir, `${LOG_FILE}.restoring`);
    await writeFile(candidate, bytes, { mode: 0o600 });
    let replayed;
    try {
      replayed = await replayLog(candidate);
    } catch (error) {
      const reason = (error as SvcError).details as { offset?: number; reason?: string } | undefined;
      throw new SvcError(
        'state_corrupt',
        `the state log in ${source} is damaged at byte ${reason?.offset ?? 0}: ${reason?.reason ?? (error as Error).message}`,
        {
          hint: 'Restore from another backup: this one was changed or damaged after it was made.',
        },
      );
    } finally {
      await rm(candidate, { force: true });
    }
    if (replayed.tornTail !== null) {
      throw new SvcError(
        'state_corrupt',
        `the state log in ${source} ends inside a record (${replayed.tornTail.bytes} bytes at byte ${replayed.tornTail.offset}): it was cut short.`,
        { hint: 'Restore from another backup: this one was changed or damaged after it was made.' },
      );
    }
    await writeWholeFile(stateDir, file, compactedRecords(replayed.image));
    return snapshotOf(replayed.image);
  } finally {
    await lock.release();
  }
}
