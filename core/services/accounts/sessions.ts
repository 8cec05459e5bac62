/**
 * Dashboard sessions: what a browser's session cookie stands for. The cookie
 * holds a random secret; the store keeps only its SHA-256 hash under
 * `sessions/<hash>`, with the account, the workspace it acts in and the
 * session's CSRF token. A session ends when it was idle too long, when it
 * reaches its absolute lifetime, or at sign-out, which deletes it on the
 * server: a copied cookie is worth nothing after that.
 */
import { randomBytes } from 'node:crypto';
import { isoAt, systemClock, type Clock } from '../../model/clock.js';
import { looksLikeSecret, randomSecret, sha256Hex } from '../../model/one-time-secrets.js';
import { storedJson, storedObject, storedString, storedTime } from '../../model/store/stored-fields.js';
import { getJson, putJson } from '../../model/store/json.js';
import type { StateStore } from '../../model/store/types.js';

const PREFIX = 'sessions/';
/** Signed out after this long without a request. */
export const SESSION_IDLE_MS = 2 * 60 * 60_000;
/** Signed out this long after signing in, however busy. */
export const SESSION_MAX_MS = 12 * 60 * 60_000;
/** `lastSeenAt` is written at most this often: a page view need not be a store write. */
const TOUCH_EVERY_MS = 60_000;

export interface Session {
  readonly accountId: string;
  /** The workspace the session acts in (switchable among the account's workspaces). */
  readonly workspace: string;
  /** Every state-changing form of this session carries it. */
  readonly csrf: string;
  readonly createdAt: string;
  readonly lastSeenAt: string;
  /** The absolute end; the idle end is `lastSeenAt` + the idle time. */
  readonly expiresAt: string;
  /** One-time ids of forms this session already sent (newest last), so that a resent form does nothing twice. */
  readonly sentForms?: readonly string[];
}

/** How many sent forms a session remembers. */
const SENT_FORMS_KEPT = 20;

export interface SessionOptions {
  readonly clock?: Clock;
  readonly idleMs?: number;
  readonly maxMs?: number;
}

export class Sessions {
  readonly #store: StateStore;
  readonly #clock: Clock;
  readonly #idleMs: number;
  readonly #maxMs: number;

  constructor(store: StateStore, options: SessionOptions = {}) {
    this.#store = store;
    this.#clock = options.clock ?? systemClock;
    this.#idleMs = options.idleMs ?? SESSION_IDLE_MS;
    this.#maxMs = options.maxMs ?? SESSION_MAX_MS;
  }

  /** A new session; the secret goes into the cookie and nowhere else. */
  async create(accountId: string, workspace: string): Promise<{ secret: string; session: Session }> {
    const secret = randomSecret();
    const now = this.#clock();
    const session: Session = {
      accountId,
      workspace,
      csrf: randomBytes(24).toString('base64url'),
      createdAt: isoAt(now),
      lastSeenAt: isoAt(now),
      expiresAt: isoAt(now + this.#maxMs),
      sentForms: [],
    };
    await putJson(this.#store, keyOf(secret), session, { cas: 0 });
    return { secret, session };
  }

  /** The live session of a cookie's secret, or null (unknown, idle too long, past its end: then it is deleted). */
  async find(secret: string | undefined): Promise<Session | null> {
    if (!looksLikeSecret(secret)) return null;
    const key = keyOf(secret);
    const entry = await getJson(this.#store, key, parseSession);
    if (entry === null) return null;
    const now = this.#clock();
    const session = entry.value;
    if (!this.#live(session, now)) {
      await this.#store.delete(key, { cas: entry.modifyIndex });
      return null;
    }
    if (now - Date.parse(session.lastSeenAt) < TOUCH_EVERY_MS) return session;
    const touched = { ...session, lastSeenAt: isoAt(now) };
    // A lost race means another request touched it just now: either write will do.
    await putJson(this.#store, key, touched, { cas: entry.modifyIndex });
    return touched;
  }

  /** Moves the session to another workspace (the caller checked that the account may use it). */
  async switchWorkspace(secret: string, workspace: string): Promise<Session | null> {
    for (;;) {
      if (!looksLikeSecret(secret)) return null;
      const entry = await getJson(this.#store, keyOf(secret), parseSession);
      if (entry === null || !this.#live(entry.value, this.#clock())) return null;
      const moved = { ...entry.value, workspace };
      if (await putJson(this.#store, keyOf(secret), moved, { cas: entry.modifyIndex })) return moved;
    }
  }

  /**
   * Claims a form's one-time id for this session: true the first time, false
   * when the form was sent before (a reload of its answer page sends it again).
   */
  async claimForm(secret: string, formId: string): Promise<boolean> {
    for (;;) {
      if (!looksLikeSecret(secret)) return false;
      const entry = await getJson(this.#store, keyOf(secret), parseSession);
      if (entry === null) return false;
      const sent = entry.value.sentForms ?? [];
      if (sent.includes(formId)) return false;
      const claimed = { ...entry.value, sentForms: [...sent, formId].slice(-SENT_FORMS_KEPT) };
      if (await putJson(this.#store, keyOf(secret), claimed, { cas: entry.modifyIndex })) return true;
    }
  }

  /** Sign-out: the session is gone on the server. Unknown secrets are fine (signed out already). */
  async end(secret: string | undefined): Promise<void> {
    if (looksLikeSecret(secret)) await this.#store.delete(keyOf(secret));
  }

  /** Ends every session of an account, or only those acting in `workspace` (it was removed from it). */
  async endAllOf(accountId: string, workspace?: string): Promise<number> {
    let ended = 0;
    for (const entry of await this.#store.list(PREFIX)) {
      const session = storedJson(entry, parseSession);
      if (session.accountId !== accountId || (workspace !== undefined && session.workspace !== workspace)) continue;
      if (await this.#store.delete(entry.key, { cas: entry.modifyIndex })) ended++;
    }
    return ended;
  }

  /** Deletes ended sessions; returns how many. For the periodic sweep. */
  async sweep(): Promise<number> {
    const now = this.#clock();
    let removed = 0;
    for (const entry of await this.#store.list(PREFIX)) {
      if (this.#live(storedJson(entry, parseSession), now)) continue;
      if (await this.#store.delete(entry.key, { cas: entry.modifyIndex })) removed++;
    }
    return removed;
  }

  #live(session: Session, now: number): boolean {
    return now < Date.parse(session.expiresAt) && now < Date.parse(session.lastSeenAt) + this.#idleMs;
  }
}

function keyOf(secret: string): string {
  return `${PREFIX}${sha256Hex(secret)}`;
}

function parseSession(value: unknown, key: string): Session {
  const record = storedObject(value, key);
  storedTime(record, 'expiresAt', key);
  storedTime(record, 'lastSeenAt', key);
  return {
    accountId: storedString(record, 'accountId', key),
    workspace: storedString(record, 'workspace', key),
    csrf: storedString(record, 'csrf', key),
    createdAt: storedString(record, 'createdAt', key),
    lastSeenAt: storedString(record, 'lastSeenAt', key),
    expiresAt: storedString(record, 'expiresAt', key),
    sentForms: Array.isArray(record.sentForms) ? record.sentForms.filter((id): id is string => typeof id === 'string') : [],
  };
}
