/**
 * What a backup of svc's data dir holds (`svc server backup`, docs/operators.md "Backup and
 * restore"): a gzipped tar of svc's own making whose entries are exactly these, the manifest
 * first. A restore takes nothing else: any other name, a link or a folder is refused.
 */
import { SvcError } from '../../model/errors.js';

/** The format this svc writes and reads; a later svc that changes it reads this one too. */
export const BACKUP_FORMAT = 1;

export const MANIFEST_ENTRY = 'svc-backup.json';
export const STATE_ENTRY = 'state/state.log';
export const KEY_ENTRY = 'secrets.key';
const BUNDLE_ENTRY = /^bundles\/([0-9a-f]{64})\.tar\.gz$/;

/** The first entry: what made the backup, and what it holds. */
export interface BackupManifest {
  readonly format: number;
  readonly svcVersion: string;
  readonly createdAt: string;
  /** The state store's index at the snapshot: every write acknowledged up to it is in. */
  readonly stateIndex: number;
  /** State keys by their first segment (`apps`, `tokens`, `secrets`, …). */
  readonly keys: Readonly<Record<string, number>>;
  readonly bundles: number;
  /** True when `secrets.key` is in it: the archive then opens every secret it holds. */
  readonly secretsKey: boolean;
}

export type BackupEntry =
  | { readonly kind: 'manifest' }
  | { readonly kind: 'state' }
  | { readonly kind: 'key' }
  | { readonly kind: 'bundle'; readonly sha256: string };

/** The entry a name stands for; `bundle_invalid` for a name svc never writes. */
export function backupEntry(name: string, file: string): BackupEntry {
  if (name === MANIFEST_ENTRY) return { kind: 'manifest' };
  if (name === STATE_ENTRY) return { kind: 'state' };
  if (name === KEY_ENTRY) return { kind: 'key' };
  const bundle = BUNDLE_ENTRY.exec(name);
  if (bundle !== null) return { kind: 'bundle', sha256: bundle[1]! };
  throw notABackup(file, `it holds ${JSON.stringify(name)}, which svc never puts in a backup`);
}

/** The manifest's JSON, checked: `bundle_invalid` for a malformed one, `conflict` for a newer format. */
export function parseManifest(text: string, file: string): BackupManifest {
  let value: Partial<BackupManifest>;
  try {
    value = JSON.parse(text) as Partial<BackupManifest>;
  } catch {
    throw notABackup(file, `its ${MANIFEST_ENTRY} is not JSON`);
  }
  if (
    typeof value !== 'object' ||
    value === null ||
    !Number.isInteger(value.format) ||
    value.format! < 1 ||
    typeof value.svcVersion !== 'string'
  )
    throw notABackup(file, `its ${MANIFEST_ENTRY} has no format (a whole number from 1) and svcVersion`);
  if (value.format! > BACKUP_FORMAT) {
    throw new SvcError(
      'conflict',
      `${file} was made by svc ${value.svcVersion} in backup format ${value.format}; this svc reads format ${BACKUP_FORMAT} and earlier.`,
      { hint: `Restore it with svc ${value.svcVersion} or later.` },
    );
  }
  // What the restore reports: all of it, as backup writes it, before anything is installed.
  const keys = value.keys as unknown;
  const wellFormed =
    Number.isInteger(value.stateIndex) &&
    typeof value.createdAt === 'string' &&
    Number.isInteger(value.bundles) &&
    typeof value.secretsKey === 'boolean' &&
    typeof keys === 'object' &&
    keys !== null &&
    !Array.isArray(keys) &&
    Object.values(keys).every((count) => Number.isInteger(count));
  if (!wellFormed)
    throw notABackup(
      file,
      `its ${MANIFEST_ENTRY} lacks fields svc server backup writes (stateIndex, createdAt, keys, bundles, secretsKey)`,
    );
  return value as BackupManifest;
}

export function notABackup(file: string, why: string): SvcError {
  return new SvcError('bundle_invalid', `${file} is not a backup svc can restore: ${why}.`, {
    hint: 'Give the file `svc server backup` wrote, whole and unchanged.',
    details: { file },
  });
}
