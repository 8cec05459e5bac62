/**
 * An app's history, read from its deployment records (records.ts keeps the last KEPT_VERSIONS versions
 * of each workload, each with its code bundle, image and options): what each version changed, which
 * one runs, and which versions a rollback goes back to.
 */
import { SvcError } from '../../model/errors.js';
import type { Workload } from '../../model/workload/types.js';
import { KEPT_VERSIONS, type DeploymentRecord, type VersionRecord } from './records.js';

/** One version of one workload, as `svc app history` shows it. */
export interface HistoryEntry {
  readonly workload: string;
  readonly version: number;
  /** The version the workload runs now. */
  readonly current: boolean;
  readonly createdAt: string;
  /** Who deployed it (a token's subject); null for svc itself. */
  readonly createdBy: string | null;
  readonly bundleSha256: string | null;
  readonly imageId: string;
  /**
   * What differs from the workload's version before it: `code` (another bundle), `image`, and the
   * settings that changed (`resources`, `scaling`, `http`, …); `new` for its first version kept.
   */
  readonly changes: readonly string[];
}

/** The settings compared between versions: everything of the resolved workload but its image (compared by id) and its name. */
function settingsOf(workload: Workload): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const [key, value] of Object.entries(workload))
    if (key !== 'image' && key !== 'name' && key !== 'app') settings[key] = JSON.stringify(value);
  return settings;
}

function changesFrom(before: VersionRecord | undefined, after: VersionRecord): string[] {
  if (before === undefined) return ['new'];
  const changes: string[] = [];
  if (before.bundleSha256 !== after.bundleSha256 || before.sourceRoot !== after.sourceRoot) changes.push('code');
  if (before.workload.image.id !== after.workload.image.id) changes.push('image');
  const [old, now] = [settingsOf(before.workload), settingsOf(after.workload)];
  for (const key of new Set([...Object.keys(old), ...Object.keys(now)])) if (old[key] !== now[key]) changes.push(key);
  return changes;
}

/** Every kept version of every workload, newest first (then by workload name). */
export function appHistory(records: readonly DeploymentRecord[]): HistoryEntry[] {
  const entries = records.flatMap((record) =>
    record.versions.map((version, index) => ({
      workload: record.workload,
      version: version.version,
      current: version.version === record.currentVersion,
      createdAt: version.createdAt,
      createdBy: version.createdBy,
      bundleSha256: version.bundleSha256,
      imageId: version.workload.image.id,
      changes: changesFrom(record.versions[index - 1], version),
    })),
  );
  return entries.sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.version - a.version || a.workload.localeCompare(b.workload));
}

/** A workload and the kept version a rollback starts for it. */
export interface RollbackTarget {
  readonly record: DeploymentRecord;
  readonly version: VersionRecord;
}

/**
 * The versions a rollback of `app` starts: each workload's `version` when it has one kept (and does not
 * run it already), or without `version` each workload's version before the one it runs. `not_found`
 * names the versions kept when none matches; `conflict` when every workload runs it already.
 */
export function rollbackTargets(app: string, records: readonly DeploymentRecord[], version?: number): RollbackTarget[] {
  const kept = [...new Set(records.flatMap((record) => record.versions.map((v) => v.version)))].sort((a, b) => a - b);
  const chosen = records.flatMap((record) => {
    const target =
      version === undefined
        ? record.versions.filter((v) => v.version < record.currentVersion).at(-1)
        : record.versions.find((v) => v.version === version);
    return target === undefined ? [] : [{ record, version: target }];
  });
  if (chosen.length === 0) {
    const which = version === undefined ? 'no version before the one it runs' : `no version ${version}`;
    throw new SvcError('not_found', `the app ${app} has ${which}; it keeps versions ${kept.join(', ') || 'none'}.`, {
      hint: `svc app history ${app} lists them; svc keeps the last ${KEPT_VERSIONS} versions of each workload.`,
      details: { versions: kept },
    });
  }
  const moving = chosen.filter(({ record, version: target }) => target.version !== record.currentVersion);
  if (moving.length === 0) {
    throw new SvcError('conflict', `the app ${app} already runs version ${version}.`, {
      hint: `svc app rollover ${app} starts fresh containers of the same version.`,
    });
  }
  return moving;
}
