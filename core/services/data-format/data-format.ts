/**
 * The format of svc's data (its state store's keys and records, in the file store or Consul KV),
 * written in the store itself as `bootstrap/data-format`, so that a newer svc knows what it opens
 * and an older one refuses what it cannot read. A server opening its store checks it before any
 * other service touches the store: a new store gets this format; an older format is migrated in
 * place, one format at a time, after a backup (the file store copies its log first); a newer one
 * is refused, naming both versions. docs/operators.md, "Upgrades".
 */
import { SvcError } from '../../model/errors.js';
import { svcVersion } from '../../model/paths.js';
import type { StateStore } from '../../model/store/types.js';
import { OWNER_CLAIM_KEY } from '../accounts/accounts.js';

/** The format this svc writes. 0 is every data dir made before the format was written down. */
export const DATA_FORMAT = 1;
export const DATA_FORMAT_KEY = 'bootstrap/data-format';

export interface DataFormatRecord {
  readonly format: number;
  /** The svc that wrote this format into the store. */
  readonly svcVersion: string;
  readonly since: string;
}

/** One step from a format to the next: what it changes in words, and the change. */
interface Migration {
  readonly describe: string;
  run(store: StateStore): Promise<void>;
}

/** By the format they start from. */
const MIGRATIONS: Readonly<Record<number, Migration>> = {
  0: { describe: 'the data format is written down; nothing else changes', run: async () => {} },
};

export interface FormatCheck {
  /** The format the store had; null for a new store. */
  readonly from: number | null;
  /** Where the copy made before migrating is; null when there was nothing to migrate or no copy to make. */
  readonly backup: string | null;
  /** What the migration did, a line each; empty when nothing was migrated. */
  readonly steps: readonly string[];
}

/**
 * Checks (and, when older, migrates) the store's data format. `backup` copies the store before
 * the first change and says where the copy is (null where it cannot: Consul, whose snapshot the
 * operator takes; docs/operators.md).
 */
export async function checkDataFormat(
  store: StateStore,
  backup: (from: number) => Promise<string | null>,
  now: () => Date = () => new Date(),
): Promise<FormatCheck> {
  const entry = await store.get(DATA_FORMAT_KEY);
  if (entry === null && (await store.get(OWNER_CLAIM_KEY)) === null) {
    await write(store, 0, now);
    return { from: null, backup: null, steps: [] };
  }
  const stored = entry === null ? null : read(entry.value);
  const from = stored?.format ?? 0;
  if (from > DATA_FORMAT) {
    throw new SvcError(
      'data_format_newer',
      `this data was written by svc ${stored!.svcVersion} in data format ${from}; this svc (${svcVersion}) reads data format ${DATA_FORMAT} and older.`,
      {
        hint: `Run svc ${stored!.svcVersion} or newer on it, or restore a backup made before that upgrade (svc server restore, or consul snapshot restore).`,
        details: { format: from, svcVersion: stored!.svcVersion, reads: DATA_FORMAT },
      },
    );
  }
  if (from === DATA_FORMAT) return { from, backup: null, steps: [] };
  const copy = await backup(from);
  const steps: string[] = [];
  for (let format = from; format < DATA_FORMAT; format++) {
    const migration = MIGRATIONS[format];
    if (migration === undefined) throw new SvcError('internal', `svc has no migration from data format ${format} to ${format + 1}`);
    await migration.run(store);
    steps.push(`data format ${format} → ${format + 1}: ${migration.describe}`);
  }
  await write(store, entry?.modifyIndex ?? 0, now);
  return { from, backup: copy, steps };
}

async function write(store: StateStore, cas: number, now: () => Date): Promise<void> {
  const record: DataFormatRecord = { format: DATA_FORMAT, svcVersion, since: now().toISOString() };
  if (!(await store.put(DATA_FORMAT_KEY, JSON.stringify(record), { cas }))) {
    throw new SvcError('conflict', 'another svc wrote the data format at the same time; start this one again.');
  }
}

function read(value: Uint8Array): DataFormatRecord {
  try {
    const record = JSON.parse(Buffer.from(value).toString('utf8')) as DataFormatRecord;
    if (Number.isInteger(record.format) && record.format >= 0 && typeof record.svcVersion === 'string') return record;
  } catch {
    // Reported below.
  }
  throw new SvcError('state_corrupt', `the state store's ${DATA_FORMAT_KEY} is not a data format record svc wrote.`, {
    hint: 'Restore the data from a backup.',
  });
}
