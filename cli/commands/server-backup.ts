/**
 * `svc server backup <file>` and `svc server restore <file>`: the embedded server's data dir
 * (`--data-dir`, SVC_DATA_DIR or the config file's, as `svc server` finds it) into one archive
 * and back into an empty data dir (core/services/backup). Backup works while the server runs;
 * restore before one starts on the new folder. With `state: consul` the state is Consul's:
 * `consul snapshot save` keeps it (docs/operators.md).
 */
import { loadConfig } from '../../config/load.js';
import { formatBytes } from '../../core/model/format-bytes.js';
import { SvcError } from '../../core/model/errors.js';
import { makeBackup } from '../../core/services/backup/make-backup.js';
import { restoreBackup } from '../../core/services/backup/restore-backup.js';
import type { CommandContext } from '../context.js';

export interface BackupFlags {
  readonly 'data-dir'?: string;
  readonly config?: string;
  /** Put the secrets key in the archive (then it opens every secret: keep it as you keep the key). */
  readonly 'with-secrets-key'?: boolean;
}

export async function serverBackup(context: CommandContext, file: string, flags: BackupFlags): Promise<void> {
  const { out } = context;
  {
    const dataDir = embeddedDataDir(flags, 'back up');
    const summary = await makeBackup({ dataDir, file, withSecretsKey: flags['with-secrets-key'] === true });
    const { manifest } = summary;
    out.done(
      `backed up ${dataDir} to ${file} (${formatBytes(summary.bytes)}): the state at index ${manifest.stateIndex} (${describeKeys(manifest.keys)}), ${manifest.bundles} code bundle${manifest.bundles === 1 ? '' : 's'}${manifest.secretsKey ? ', the secrets key' : ''}`,
    );
    if (manifest.secretsKey)
      out.warn(`${file} holds the secrets key: whoever reads it can open every secret in it. Keep it as you keep the key.`);
    if (summary.keyLeftOut !== null)
      out.warn(
        `the secrets key ${summary.keyLeftOut} is not in the backup (add --with-secrets-key to put it in): keep a copy apart, or the secrets cannot be opened after a restore.`,
      );
  }
}

export async function serverRestore(context: CommandContext, file: string, flags: BackupFlags): Promise<void> {
  const { out } = context;
  {
    const dataDir = embeddedDataDir(flags, 'restore');
    const summary = await restoreBackup({ dataDir, file });
    const { manifest } = summary;
    out.done(
      `restored ${file} (made by svc ${manifest.svcVersion} at ${manifest.createdAt}) into ${dataDir}: the state at index ${manifest.stateIndex} (${describeKeys(manifest.keys)}), ${summary.bundles} code bundle${summary.bundles === 1 ? '' : 's'}${summary.secretsKey ? ', the secrets key' : ''}`,
    );
    if (!summary.secretsKey)
      out.warn(
        'the backup holds no secrets key: put the key the secrets were sealed with back (SVC_SECRETS_KEY, secretsKeyFile, or <data dir>/secrets.key) before they are read.',
      );
    out.step(`start it with: svc server --data-dir ${dataDir} (its owner token is made anew; the other tokens are restored)`);
  }
}

/** The data dir as `svc server` would use it; refused when the state is Consul's. */
function embeddedDataDir(flags: BackupFlags, what: string): string {
  const config = loadConfig({ flags: { dataDir: flags['data-dir'] }, file: flags.config });
  if (config.state === 'consul') {
    throw new SvcError(
      'bad_request',
      `svc server ${what} works on the embedded store; this configuration keeps svc's state in Consul KV.`,
      {
        hint: 'Use `consul snapshot save` and `consul snapshot restore` (docs/operators.md, "Backup and restore"), and copy the data dir\'s bundles folder.',
      },
    );
  }
  return config.dataDir;
}

/** `3 apps, 2 tokens, …` from the keys by their first segment. */
function describeKeys(keys: Readonly<Record<string, number>>): string {
  const parts = Object.entries(keys)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, count]) => `${count} ${group}`);
  return parts.length === 0 ? 'empty' : `keys: ${parts.join(', ')}`;
}
