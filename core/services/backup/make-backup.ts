/**
 * `svc server backup <file>`: a consistent copy of an embedded server's data dir, taken while it
 * runs or not. The state is read from its log at one index (core/infra/state/snapshot.ts); the
 * bundles are listed after it, so that every bundle the state names is in (a bundle is stored
 * before any record names it, and never changes). The secrets key only when asked: with it, the
 * archive opens every secret. Volumes' files, logs, images and the owner token are not in it.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import tar from 'tar-stream';
import { SvcError } from '../../model/errors.js';
import { svcVersion } from '../../model/paths.js';
import { asDiskFull } from '../../infra/files/disk-full.js';
import { syncDirectory } from '../../infra/state/fs-sync.js';
import { snapshotState } from '../../infra/state/snapshot.js';
import { KEY_FILE_NAME } from '../secrets/key-source.js';
import { BACKUP_FORMAT, type BackupManifest, KEY_ENTRY, MANIFEST_ENTRY, STATE_ENTRY } from './backup-format.js';
import { pathExists } from '../../infra/files/path-exists.js';

export interface BackupOptions {
  readonly dataDir: string;
  /** Where the archive goes; refused when something is there. */
  readonly file: string;
  /** Put `<data dir>/secrets.key` in the archive too. */
  readonly withSecretsKey: boolean;
  readonly now?: () => Date;
}

export interface BackupSummary {
  readonly manifest: BackupManifest;
  readonly bytes: number;
  /** The data dir has a secrets key that the archive leaves out (its secrets need it to open). */
  readonly keyLeftOut: string | null;
}

const BUNDLE_FILE = /^[0-9a-f]{64}\.tar\.gz$/;

export async function makeBackup(options: BackupOptions): Promise<BackupSummary> {
  const file = path.resolve(options.file);
  if (await pathExists(file)) {
    throw new SvcError('conflict', `${file} already exists: a backup never replaces a file.`, {
      hint: 'Name a new file, or move that one away.',
    });
  }
  const snapshot = await snapshotState(path.join(options.dataDir, 'state'));
  const bundleDir = path.join(options.dataDir, 'bundles');
  const bundles = (await readdir(bundleDir).catch(() => [] as string[])).filter((name) => BUNDLE_FILE.test(name)).sort();
  const keyFile = path.join(options.dataDir, KEY_FILE_NAME);
  const hasKey = await pathExists(keyFile);
  const withKey = options.withSecretsKey && hasKey;
  const keys: Record<string, number> = {};
  for (const key of snapshot.keys) keys[key.split('/')[0]!] = (keys[key.split('/')[0]!] ?? 0) + 1;
  const manifest: BackupManifest = {
    format: BACKUP_FORMAT,
    svcVersion,
    createdAt: (options.now?.() ?? new Date()).toISOString(),
    stateIndex: snapshot.index,
    keys,
    bundles: bundles.length,
    secretsKey: withKey,
  };

  // Written beside its name and renamed once whole and synced: a backup cut short is never taken for one.
  await mkdir(path.dirname(file), { recursive: true });
  const partial = `${file}.partial-${process.pid}`;
  const pack = tar.pack();
  // The file's own failure (a folder svc may not write, a disk that fills up) is the one to tell; it
  // also stops the entries being added, which would otherwise wait on a pack nobody reads.
  let writeFailure: unknown = null;
  const written = pipeline(pack, createGzip(), createWriteStream(partial, { flags: 'wx', mode: 0o600 })).catch((error: unknown) => {
    writeFailure = error;
    pack.destroy(error as Error);
  });
  try {
    await add(pack, MANIFEST_ENTRY, Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
    await add(pack, STATE_ENTRY, snapshot.bytes);
    for (const name of bundles) await addFile(pack, `bundles/${name}`, path.join(bundleDir, name));
    if (withKey) await addFile(pack, KEY_ENTRY, keyFile);
    pack.finalize();
    await written;
    if (writeFailure !== null) throw writeFailure;
    const synced = await open(partial, 'r');
    await synced.sync().finally(() => synced.close());
  } catch (error) {
    pack.destroy();
    await written;
    await rm(partial, { force: true });
    throw await asDiskFull(writeFailure ?? error, partial);
  }
  await rename(partial, file);
  await syncDirectory(path.dirname(file));
  return { manifest, bytes: (await stat(file)).size, keyLeftOut: hasKey && !withKey ? keyFile : null };
}

function add(pack: tar.Pack, name: string, bytes: Buffer): Promise<void> {
  return new Promise((resolve, reject) =>
    pack.entry({ name, size: bytes.length, mode: 0o600 }, bytes, (error) => (error ? reject(error) : resolve())),
  );
}

async function addFile(pack: tar.Pack, name: string, source: string): Promise<void> {
  const { size } = await stat(source);
  await new Promise<void>((resolve, reject) => {
    const entry = pack.entry({ name, size, mode: 0o600 }, (error) => (error ? reject(error) : resolve()));
    pipeline(createReadStream(source), entry).catch(reject);
  });
}
