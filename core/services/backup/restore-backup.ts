/**
 * `svc server restore <file>`: a backup (make-backup.ts) into an empty data dir. Every entry is
 * checked before it is kept: only the names svc writes, plain files, the manifest first and of a
 * format this svc reads, each bundle's sha256 against its name, the state log replayed whole.
 * The state goes in last, so a restore that fails leaves no store behind (only files it would
 * have needed), and a data dir that has state is never touched.
 */
import { createReadStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';
import { SvcError } from '../../model/errors.js';
import { BundleStore } from '../../infra/bundles/store.js';
import { installState } from '../../infra/state/snapshot.js';
import { KEY_FILE_NAME } from '../secrets/key-source.js';
import { type BackupManifest, backupEntry, MANIFEST_ENTRY, notABackup, parseManifest } from './backup-format.js';
import { pathExists } from '../../infra/files/path-exists.js';

export interface RestoreOptions {
  readonly dataDir: string;
  readonly file: string;
}

export interface RestoreSummary {
  readonly manifest: BackupManifest;
  readonly keys: number;
  readonly bundles: number;
  readonly secretsKey: boolean;
}

/** The most a state log in a backup may hold: it is read into memory to be checked. */
const MAX_STATE_BYTES = 2 * 1024 * 1024 * 1024;
/** A manifest or a key file is a few hundred bytes. */
const MAX_SMALL_BYTES = 64 * 1024;

export async function restoreBackup(options: RestoreOptions): Promise<RestoreSummary> {
  const file = path.resolve(options.file);
  const dataDir = path.resolve(options.dataDir);
  const stateDir = path.join(dataDir, 'state');
  if (await pathExists(path.join(stateDir, 'state.log'))) {
    throw new SvcError('conflict', `${dataDir} already holds svc's state: a restore goes into an empty data dir.`, {
      hint: 'Give --data-dir (or SVC_DATA_DIR) a new folder, or move this one away first.',
    });
  }
  if (!(await pathExists(file))) throw new SvcError('not_found', `there is no backup at ${file}.`);
  const extract = tar.extract();
  // The reading's own failure (a cut-short gzip) is the one to tell: the entries' loop only sees the extractor stop.
  let readFailure: unknown = null;
  const reading = pipeline(createReadStream(file), createGunzip(), extract).catch((error: unknown) => {
    readFailure = error;
  });
  const broken = (error: unknown) =>
    error instanceof SvcError ? error : notABackup(file, `it is not a whole gzipped tar (${(error as Error).message})`);
  let read: ReadBackup;
  try {
    read = await readEntries(extract, file, BundleStore.inDataDir(dataDir));
  } catch (error) {
    extract.destroy();
    await reading;
    throw broken(error instanceof SvcError ? error : (readFailure ?? error));
  }
  await reading;
  if (readFailure !== null) throw broken(readFailure);
  const { manifest, state, keyText, bundleCount } = read;
  if (manifest === null) throw notABackup(file, 'it is empty');
  if (state === null) throw notABackup(file, 'it holds no state log');
  if (keyText !== null) {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    // `wx`: a key already in the folder is never replaced.
    await writeFile(path.join(dataDir, KEY_FILE_NAME), keyText, { mode: 0o600, flag: 'wx' }).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      throw new SvcError('conflict', `${path.join(dataDir, KEY_FILE_NAME)} already exists: a restore never replaces a secrets key.`, {
        hint: 'Restore into a new, empty data dir.',
      });
    });
  }
  const installed = await installState(stateDir, state, file);
  return { manifest, keys: installed.keys.length, bundles: bundleCount, secretsKey: keyText !== null };
}

interface ReadBackup {
  readonly manifest: BackupManifest | null;
  readonly state: Buffer | null;
  readonly keyText: Buffer | null;
  readonly bundleCount: number;
}

/** Every entry, checked as it comes: the manifest first, the state log and key kept, each bundle stored (its hash checked). */
async function readEntries(extract: tar.Extract, file: string, bundles: BundleStore): Promise<ReadBackup> {
  let manifest: BackupManifest | null = null;
  let state: Buffer | null = null;
  let keyText: Buffer | null = null;
  let bundleCount = 0;
  for await (const entry of extract) {
    const { name, type, size } = entry.header;
    if (type !== 'file') throw notABackup(file, `${JSON.stringify(name)} is a ${type}, where svc writes plain files only`);
    const kind = backupEntry(name, file);
    if (manifest === null && kind.kind !== 'manifest') throw notABackup(file, `it does not start with ${MANIFEST_ENTRY}`);
    const bytes = entry as AsyncIterable<Buffer>;
    switch (kind.kind) {
      case 'manifest':
        if (manifest !== null) throw notABackup(file, `it holds two ${MANIFEST_ENTRY}`);
        manifest = parseManifest((await collect(bytes, MAX_SMALL_BYTES, name, file)).toString('utf8'), file);
        break;
      case 'state':
        if (state !== null) throw notABackup(file, 'it holds two state logs');
        if ((size ?? 0) > MAX_STATE_BYTES) throw notABackup(file, `its state log is larger than ${MAX_STATE_BYTES} bytes`);
        state = await collect(bytes, MAX_STATE_BYTES, name, file);
        break;
      case 'key':
        if (keyText !== null) throw notABackup(file, 'it holds two secrets keys');
        keyText = await collect(bytes, MAX_SMALL_BYTES, name, file);
        break;
      case 'bundle':
        // Hashed as it is stored: a bundle whose bytes are not its name's is refused (bundle_invalid).
        await bundles.putStream(Readable.from(bytes), kind.sha256);
        bundleCount++;
        break;
    }
  }
  return { manifest, state, keyText, bundleCount };
}

/** The entry's bytes, at most `max`. */
async function collect(entry: AsyncIterable<Buffer>, max: number, name: string, file: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of entry) {
    size += chunk.length;
    if (size > max) throw notABackup(file, `${JSON.stringify(name)} is larger than svc ever writes it`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
