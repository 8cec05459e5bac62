/**
 * Each workspace's signing secret of completion callbacks (core/services/calls): svc signs every
 * callback with it (HMAC-SHA256), so that a receiver knows the POST came from svc. Made the first
 * time it is needed (a spawn with a callback URL, or a member asking for it), kept at
 * `callback-secrets/<workspace>` sealed with the server's keyring as secret values are (the AAD
 * binds it to its workspace: moved to another, it no longer opens), never in plaintext.
 */
import { randomBytes } from 'node:crypto';
import { isoAt, systemClock, type Clock } from '../../model/clock.js';
import { SvcError } from '../../model/errors.js';
import { getJson, type JsonEntry, putJson } from '../../model/store/json.js';
import { storedJson, storedObject, storedString } from '../../model/store/stored-fields.js';
import type { StateStore } from '../../model/store/types.js';
import type { KeySource } from './key-source.js';
import { Keyring } from './keyring.js';

const PREFIX = 'callback-secrets/';
/** Marks the secret for what it is where people paste it (`svcwh_` + 32 random bytes, base64url). */
const SECRET_PREFIX = 'svcwh_';

interface StoredSecret {
  readonly sealed: string;
  /** When this secret was made (its first use, or its last rotation). */
  readonly createdAt: string;
}

export interface CallbackSecret {
  /** The HMAC key is this string's UTF-8 bytes, prefix included. */
  readonly secret: string;
  readonly createdAt: string;
}

export class CallbackSecrets {
  readonly #store: StateStore;
  readonly #keys: KeySource;
  readonly #clock: Clock;

  constructor(store: StateStore, keys: KeySource, clock: Clock = systemClock) {
    this.#store = store;
    this.#keys = keys;
    this.#clock = clock;
  }

  /** The workspace's secret, made now if it has none yet. */
  async get(workspace: string): Promise<CallbackSecret> {
    for (;;) {
      const entry = await this.#read(workspace);
      if (entry !== null)
        return { secret: (await this.#keys('open')).open(entry.value.sealed, aad(workspace)), createdAt: entry.value.createdAt };
      const made = await this.#put(workspace, 0);
      if (made !== null) return made;
    }
  }

  /** A new secret in place of the old one, which signs nothing from now on. */
  async rotate(workspace: string): Promise<CallbackSecret> {
    for (;;) {
      const entry = await this.#read(workspace);
      const made = await this.#put(workspace, entry?.modifyIndex ?? 0);
      if (made !== null) return made;
    }
  }

  /** Seals every secret not under the keyring's first key again (after a key rotation); how many were. */
  async reseal(): Promise<number> {
    const entries = await this.#store.list(PREFIX);
    if (entries.length === 0) return 0;
    const ring = await this.#keys('open');
    let count = 0;
    for (const entry of entries) {
      const stored = storedJson(entry, validStored);
      if (Keyring.keyIdOf(stored.sealed) === ring.currentId) continue;
      const workspace = entry.key.slice(PREFIX.length);
      const sealed = ring.seal(ring.open(stored.sealed, aad(workspace)), aad(workspace));
      if (!(await putJson(this.#store, entry.key, { ...stored, sealed }, { cas: entry.modifyIndex }))) {
        throw new SvcError('conflict', `the callback secret of ${workspace} changed while it was sealed again; run the command again.`);
      }
      count += 1;
    }
    return count;
  }

  /** Stores a fresh secret if the record is still at `cas`; null when another change came first. */
  async #put(workspace: string, cas: number): Promise<CallbackSecret | null> {
    const secret = `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
    const stored: StoredSecret = { sealed: (await this.#keys('seal')).seal(secret, aad(workspace)), createdAt: isoAt(this.#clock()) };
    return (await putJson(this.#store, `${PREFIX}${workspace}`, stored, { cas })) ? { secret, createdAt: stored.createdAt } : null;
  }

  #read(workspace: string): Promise<JsonEntry<StoredSecret> | null> {
    return getJson(this.#store, `${PREFIX}${workspace}`, validStored);
  }
}

/** What ties the sealed secret to its workspace. */
function aad(workspace: string): string {
  return `svc callback secret\0${workspace}`;
}

function validStored(value: unknown, key: string): StoredSecret {
  const record = storedObject(value, key);
  return { sealed: storedString(record, 'sealed', key), createdAt: storedString(record, 'createdAt', key) };
}
