/**
 * The in-memory index of live tokens, hash → principal, that makes verifying
 * a token a hash and a Map lookup with no store round trip (it runs on every
 * gateway request). It is kept current two ways:
 *
 * - In this process, `Tokens` applies its own changes as it makes them: a
 *   revocation is applied synchronously once the store acknowledged it, so
 *   the very next `verify` refuses the token.
 * - Changes made by other processes arrive through a blocking `watch` on
 *   `tokens/`, which re-reads the prefix as soon as anything under it changes.
 *
 * Reloads and local additions run one at a time, so a reload that listed the
 * store before a local write cannot drop that write. Hashes revoked here are
 * remembered for the life of the process (revocation is final), so no reload
 * can bring one back either.
 */
import type { Principal } from '../../model/principal.js';
import { followPrefix } from '../../infra/state/follow-prefix.js';
import type { StateStore } from '../../model/store/types.js';
import { watchIndex } from '../../infra/state/watch-index.js';
import { storedJson } from '../../model/store/stored-fields.js';
import { parseTokenRecord, tokenPrincipal, TOKENS_PREFIX, type TokenRecord } from './token-records.js';

export interface IndexedToken {
  readonly principal: Principal;
  /** Milliseconds since the epoch, parsed once here rather than on every request. */
  readonly expiresAtMs: number | null;
}

export interface TokenIndexOptions {
  /** Told when a reload fails; the index keeps what it had and retries a second later. */
  readonly onError?: (error: unknown) => void;
}

export class TokenIndex {
  readonly #store: StateStore;
  readonly #onError: (error: unknown) => void;
  #byHash = new Map<string, IndexedToken>();
  readonly #revoked = new Set<string>();
  #chain: Promise<unknown> = Promise.resolve();
  readonly #stop = new AbortController();
  #watching: Promise<void> = Promise.resolve();

  private constructor(store: StateStore, options: TokenIndexOptions) {
    this.#store = store;
    this.#onError = options.onError ?? ((error) => process.emitWarning(`token index: ${String(error)}`, { code: 'SVC_AUTH' }));
  }

  /** Loads every token and starts watching for changes; `close()` stops. */
  static async open(store: StateStore, options: TokenIndexOptions = {}): Promise<TokenIndex> {
    const index = new TokenIndex(store, options);
    const since = await index.#serial(() => index.#reload());
    index.#watching = followPrefix({
      store: index.#store,
      prefix: TOKENS_PREFIX,
      signal: index.#stop.signal,
      since,
      reload: () => index.#serial(() => index.#reload()),
      report: (error) => index.#onError(error),
    });
    return index;
  }

  /** The live token with this hash; revoked and unknown ones are undefined. Expiry is the caller's check. */
  lookup(hash: string): IndexedToken | undefined {
    return this.#byHash.get(hash);
  }

  /** Adds a token this process just stored. Resolves once `lookup` finds it. */
  remember(record: TokenRecord): Promise<void> {
    return this.#serial(() => {
      if (record.revokedAt === null && !this.#revoked.has(record.hash)) this.#byHash.set(record.hash, indexed(record));
    });
  }

  /** Drops a token this process just revoked, synchronously: the next lookup misses. */
  forget(hash: string): void {
    this.#revoked.add(hash);
    this.#byHash.delete(hash);
  }

  async close(): Promise<void> {
    this.#stop.abort();
    await this.#watching;
  }

  /** Replaces the map with what the store holds; returns the prefix's index read before listing (what the next watch waits from). */
  async #reload(): Promise<number> {
    const since = await watchIndex(this.#store, TOKENS_PREFIX);
    const next = new Map<string, IndexedToken>();
    for (const entry of await this.#store.list(TOKENS_PREFIX)) {
      const record = storedJson(entry, parseTokenRecord);
      if (record.revokedAt === null && !this.#revoked.has(record.hash)) next.set(record.hash, indexed(record));
    }
    this.#byHash = next;
    return since;
  }

  #serial<T>(task: () => T | Promise<T>): Promise<T> {
    const run = this.#chain.then(task);
    this.#chain = run.catch(() => undefined);
    return run;
  }
}

function indexed(record: TokenRecord): IndexedToken {
  return { principal: tokenPrincipal(record), expiresAtMs: record.expiresAt === null ? null : Date.parse(record.expiresAt) };
}
