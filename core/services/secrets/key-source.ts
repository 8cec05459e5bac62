/**
 * Where the server's secrets keys come from, never the state store: the
 * `secretsKey` setting (SVC_SECRETS_KEY), the file `secretsKeyFile` names, or,
 * on the embedded default (file store), `<data dir>/secrets.key`, beside the
 * store's own folder and created (0600) the first time a value is sealed. A
 * Consul store is shared by replicas, which must all hold the same keys: it
 * needs one of the two settings, and without one every use of a secret is
 * refused (svc itself starts, so that an upgrade of a cluster that stores no
 * secrets goes on serving). Either holds one or more base64 keys of 32
 * bytes (commas or lines between them): the first seals, all open.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { SvcError } from '../../model/errors.js';
import { KEY_BYTES, Keyring } from './keyring.js';

export const KEY_FILE_NAME = 'secrets.key';
export const MAKE_KEY_HINT =
  'Make one with `head -c 32 /dev/urandom | base64 > secrets.key && chmod 600 secrets.key` and set SVC_SECRETS_KEY_FILE to that file (or secretsKeyFile in the config file), the same key on every replica; docs/secrets.md says more.';

export interface KeySettings {
  /** Base64 keys, the sealing one first. */
  readonly secretsKey: string | null;
  /** A file of base64 keys, the sealing one first. */
  readonly secretsKeyFile: string | null;
}

export interface KeySourceOptions extends KeySettings {
  readonly dataDir: string;
  readonly state: 'file' | 'consul' | 'memory';
}

/** The keyring, read when first needed; `create` makes the embedded key file when there is none yet. */
export type KeySource = (purpose: 'seal' | 'open') => Promise<Keyring>;

/** Checks the settings now (a key file others may read refuses to start) and returns the source. */
export async function openKeySource(options: KeySourceOptions): Promise<KeySource> {
  // The environment's key wins over the config file's key file, as settings from the environment do.
  if (options.secretsKey !== null) {
    const ring = new Keyring(parseKeys(options.secretsKey, 'SVC_SECRETS_KEY'));
    return async () => ring;
  }
  if (options.secretsKeyFile !== null) {
    const ring = new Keyring(await readKeyFile(options.secretsKeyFile));
    return async () => ring;
  }
  if (options.state === 'consul') {
    return async () => {
      throw new SvcError(
        'secrets_key_invalid',
        'svc keeps its state in Consul but has no secrets key, so it stores and reads no secret: every replica must seal and open secrets with the same key, kept outside Consul.',
        { hint: MAKE_KEY_HINT },
      );
    };
  }
  if (options.state === 'memory') {
    const ring = new Keyring([randomBytes(KEY_BYTES)]);
    return async () => ring;
  }
  return embeddedKeySource(path.join(options.dataDir, KEY_FILE_NAME));
}

/** `<data dir>/secrets.key`: read once it exists, written (0600, never replaced) the first time a value is sealed. */
function embeddedKeySource(file: string): KeySource {
  let ring: Keyring | null = null;
  let creating: Promise<Keyring> | null = null;
  return async (purpose) => {
    if (ring !== null) return ring;
    const existing = await readKeyFile(file).catch((error: unknown) => {
      if ((error as { details?: { missing?: boolean } }).details?.missing) return null;
      throw error;
    });
    if (existing !== null) return (ring = new Keyring(existing));
    if (purpose === 'open') {
      throw new SvcError(
        'secrets_key_invalid',
        `the secrets key file ${file} is missing, so the secrets stored in this data dir cannot be opened.`,
        {
          hint: 'Put the key file back from a backup; without it, delete the secrets and create them again.',
        },
      );
    }
    creating ??= (async () => {
      const key = randomBytes(KEY_BYTES);
      // `wx`: two servers on one data dir never overwrite each other's key (the store's lock keeps out the second anyway).
      await fs.writeFile(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
      return (ring = new Keyring([key]));
    })();
    return creating;
  };
}

async function readKeyFile(file: string): Promise<Buffer[]> {
  let stat;
  try {
    stat = await fs.stat(file);
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new SvcError('config_invalid', `cannot read the secrets key file ${file}: ${(error as Error).message}`, {
      hint: MAKE_KEY_HINT,
      details: { missing },
    });
  }
  if ((stat.mode & 0o077) !== 0) {
    throw new SvcError(
      'config_invalid',
      `the secrets key file ${file} may be read by other users (mode ${(stat.mode & 0o777).toString(8)}).`,
      { hint: `Run \`chmod 600 ${file}\`.` },
    );
  }
  return parseKeys(await fs.readFile(file, 'utf8'), file);
}

/** Base64 keys separated by commas or lines; `#` starts a comment. */
export function parseKeys(text: string, where: string): Buffer[] {
  const entries = text
    .split('\n')
    .map((line) => line.replace(/#.*/, ''))
    .join(',')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) throw new SvcError('config_invalid', `${where} holds no secrets key.`, { hint: MAKE_KEY_HINT });
  return entries.map((entry, index) => {
    const key = Buffer.from(entry, 'base64');
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(entry) || key.length !== KEY_BYTES) {
      throw new SvcError(
        'config_invalid',
        `key ${index + 1} of ${where} is not ${KEY_BYTES} bytes in base64 (it decodes to ${key.length} bytes).`,
        { hint: MAKE_KEY_HINT },
      );
    }
    return key;
  });
}
