/**
 * When each token was last used, for the token lists (Settings → Tokens,
 * `svc token list`). The verifier notes a use in memory (a Map set on the
 * request path, nothing more); the control plane's sweeper writes the notes
 * to `token-usage/<workspace>/<id>` about once a minute, apart from the
 * token records, so that a busy token does not make every replica's token
 * index reload. A list shows the newer of the stored and the noted time.
 */
import { storedJson, storedObject, storedString } from '../../model/store/stored-fields.js';
import { isoAt } from '../../model/clock.js';
import { putJson } from '../../model/store/json.js';
import type { StateStore } from '../../model/store/types.js';

const PREFIX = 'token-usage/';

/** Whose use is noted: a token's principal (the index keeps one object per token). */
export interface TokenUser {
  readonly workspace: string;
  readonly tokenId: string;
}

export class TokenUsage {
  readonly #store: StateStore;
  /** Uses noted since they were last settled, by the principal object: one Map set per request, no key string built. */
  #pending = new Map<TokenUser, number>();
  /** `<workspace>/<id>` → last use (ms) of everything noted by this process, so a list is current before the flush. */
  readonly #seen = new Map<string, number>();
  /** The same, for the uses no flush has written yet. */
  #unflushed = new Map<string, number>();

  constructor(store: StateStore) {
    this.#store = store;
  }

  /** Notes a use now. Cheap: the request path calls it. */
  touch(user: TokenUser, now: number): void {
    this.#pending.set(user, now);
  }

  /** Last use of each token of `workspace` that has one (ISO 8601), stored or noted here. */
  async lastUsed(workspace: string): Promise<Map<string, string>> {
    const times = new Map<string, number>();
    for (const entry of await this.#store.list(`${PREFIX}${workspace}/`)) {
      const { lastUsedAt } = storedJson(entry, parseUsage);
      times.set(entry.key.slice(PREFIX.length + workspace.length + 1), Date.parse(lastUsedAt));
    }
    this.#settle();
    for (const [key, ms] of this.#seen) {
      const [space, id] = key.split('/') as [string, string];
      if (space === workspace && ms > (times.get(id) ?? 0)) times.set(id, ms);
    }
    return new Map([...times].map(([id, ms]) => [id, isoAt(ms)]));
  }

  /** Writes the uses noted since the last flush (one store write per used token). */
  async flush(): Promise<void> {
    this.#settle();
    const unflushed = this.#unflushed;
    this.#unflushed = new Map();
    for (const [key, ms] of unflushed) await putJson(this.#store, `${PREFIX}${key}`, { lastUsedAt: isoAt(ms) });
  }

  /** Forgets a revoked token's use (its record stays as the token's tombstone does). */
  async forget(workspace: string, tokenId: string): Promise<void> {
    const key = `${workspace}/${tokenId}`;
    this.#settle();
    this.#unflushed.delete(key);
    this.#seen.delete(key);
    await this.#store.delete(`${PREFIX}${key}`);
  }

  /** Moves the uses noted by principal to their keys: `#seen`, and `#unflushed` until a flush writes them. */
  #settle(): void {
    for (const [user, ms] of this.#pending) {
      const key = `${user.workspace}/${user.tokenId}`;
      // A reload of the token index makes new principal objects: the same key may come twice.
      if (ms > (this.#seen.get(key) ?? 0)) this.#seen.set(key, ms);
      if (ms > (this.#unflushed.get(key) ?? 0)) this.#unflushed.set(key, ms);
    }
    this.#pending = new Map();
  }
}

function parseUsage(value: unknown, key: string): { lastUsedAt: string } {
  return { lastUsedAt: storedString(storedObject(value, key), 'lastUsedAt', key) };
}
