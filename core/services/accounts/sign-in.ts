/**
 * One-time sign-in links for the dashboard: `svc server` prints one on first
 * start. The secret is random, stored only as its SHA-256 hash under
 * `sign-in/<hash>`, expires (15 minutes by default) and works once.
 */
import { isoAt, systemClock, type Clock } from '../../model/clock.js';
import { looksLikeSecret, randomSecret, sha256Hex } from '../../model/one-time-secrets.js';
import { storedJson, storedObject, storedString, storedStringOrNull, storedTime } from '../../model/store/stored-fields.js';
import { SvcError } from '../../model/errors.js';
import { getJson, putJson } from '../../model/store/json.js';
import type { StateStore } from '../../model/store/types.js';
import type { Accounts } from './accounts.js';
import type { Account } from './types.js';

const PREFIX = 'sign-in/';
export const SIGN_IN_LIFETIME_MS = 15 * 60_000;

interface SignInRecord {
  readonly accountId: string;
  readonly createdAt: string;
  readonly expiresAt: string;
  /** Set by the one consume that wins; the record is deleted right after. */
  readonly usedAt: string | null;
}

export interface IssuedSignIn {
  /** Goes into the link; show it once. */
  readonly secret: string;
  readonly expiresAt: string;
}

export class SignInLinks {
  readonly #store: StateStore;
  readonly #accounts: Accounts;
  readonly #clock: Clock;
  readonly #lifetimeMs: number;

  constructor(store: StateStore, accounts: Accounts, options: { clock?: Clock; lifetimeMs?: number } = {}) {
    this.#store = store;
    this.#accounts = accounts;
    this.#clock = options.clock ?? systemClock;
    this.#lifetimeMs = options.lifetimeMs ?? SIGN_IN_LIFETIME_MS;
  }

  /** A one-time link for the account, valid for `lifetimeMs` (default: 15 minutes; invitations last longer). */
  async issue(accountId: string, lifetimeMs = this.#lifetimeMs): Promise<IssuedSignIn> {
    await this.#accounts.require(accountId);
    const secret = randomSecret();
    const now = this.#clock();
    const record: SignInRecord = { accountId, createdAt: isoAt(now), expiresAt: isoAt(now + lifetimeMs), usedAt: null };
    await putJson(this.#store, `${PREFIX}${sha256Hex(secret)}`, record, { cas: 0 });
    return { secret, expiresAt: record.expiresAt };
  }

  /**
   * The account the link signs in, exactly once. Unknown, used and expired
   * secrets are all `unauthorized` with the same message, so the answer does
   * not tell a guesser which secrets existed.
   */
  async consume(secret: string): Promise<Account> {
    const refused = new SvcError('unauthorized', 'this sign-in link is invalid, expired or already used', {
      hint: 'Ask the operator of this svc server for a new sign-in link.',
    });
    if (!looksLikeSecret(secret)) throw refused;
    const key = `${PREFIX}${sha256Hex(secret)}`;
    const entry = await getJson(this.#store, key, parseSignIn);
    if (entry === null || entry.value.usedAt !== null) throw refused;
    if (this.#clock() >= Date.parse(entry.value.expiresAt)) {
      await this.#store.delete(key, { cas: entry.modifyIndex });
      throw refused;
    }
    // Marking it used with compare-and-set makes exactly one of two concurrent consumers win.
    // (A delete with cas would not: deleting an absent key succeeds, as in Consul.)
    const used: SignInRecord = { ...entry.value, usedAt: isoAt(this.#clock()) };
    if (!(await putJson(this.#store, key, used, { cas: entry.modifyIndex }))) throw refused;
    await this.#store.delete(key);
    return this.#accounts.require(entry.value.accountId);
  }

  /** Deletes expired and used links; returns how many. For a periodic sweep. */
  async sweep(): Promise<number> {
    const now = this.#clock();
    let removed = 0;
    for (const entry of await this.#store.list(PREFIX)) {
      const record = storedJson(entry, parseSignIn);
      if (record.usedAt === null && now < Date.parse(record.expiresAt)) continue;
      if (await this.#store.delete(entry.key, { cas: entry.modifyIndex })) removed++;
    }
    return removed;
  }
}

function parseSignIn(value: unknown, key: string): SignInRecord {
  const record = storedObject(value, key);
  storedTime(record, 'expiresAt', key);
  return {
    accountId: storedString(record, 'accountId', key),
    createdAt: storedString(record, 'createdAt', key),
    expiresAt: storedString(record, 'expiresAt', key),
    usedAt: storedStringOrNull(record, 'usedAt', key),
  };
}
