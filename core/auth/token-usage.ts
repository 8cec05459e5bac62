/**
 * When each token was last used, for the token lists (Settings → Tokens,
 * `svc token list`). The verifier notes a use in memory (a Map set on the
 * request path, nothing more); the control plane's sweeper writes the notes
 * to `token-usage/<workspace>/<id>` about once a minute, apart from the
 * token records, so that a busy token does not make every replica's token
 * index reload. A list shows the newer of the stored and the noted time.
 */
import { storedJson, storedObject, storedString } from './stored-fields.js';
import { isoAt } from './clock.js';
import { putJson } from '../state/json.js';
import type { StateStore } from '../state/types.js';

const PREFIX = 'token-usage/';

export class TokenUsage {
  readonly #store: StateStore;
  /** `<workspace>/<id>` → last use (ms), noted since the last flush. */
  #pending = new Map<string, number>();
  /** Everything noted by this process, so a list is current before the flush. */
  readonly #seen = new Map<string, number>();

  constructor(store: StateStore) {
    this.#store = store;
  }

  /** Notes a use now. Cheap: the request path calls it. */
  touch(workspace: string, tokenId: string, now: number): void {
    const key = `${workspace}/${tokenId}`;
    this.#pending.set(key, now);
    this.#seen.set(key, now);
  }

  /** Last use of each token of `workspace` that has one (ISO 8601), stored or noted here. */
  async lastUsed(workspace: string): Promise<Map<string, string>> {
    const times = new Map<string, number>();
    for (const entry of await this.#store.list(`${PREFIX}${workspace}/`)) {
      const { lastUsedAt } = storedJson(entry, parseUsage);
      times.set(entry.key.slice(PREFIX.length + workspace.length + 1), Date.parse(lastUsedAt));
    }
    for (const [key, ms] of this.#seen) {
      const [space, id] = key.split('/') as [string, string];
      if (space === workspace && ms > (times.get(id) ?? 0)) times.set(id, ms);
    }
    return new Map([...times].map(([id, ms]) => [id, isoAt(ms)]));
  }

  /** Writes the uses noted since the last flush (one store write per used token). */
  async flush(): Promise<void> {
    const pending = this.#pending;
    this.#pending = new Map();
    for (const [key, ms] of pending) await putJson(this.#store, `${PREFIX}${key}`, { lastUsedAt: isoAt(ms) });
  }

  /** Forgets a revoked token's use (its record stays as the token's tombstone does). */
  async forget(workspace: string, tokenId: string): Promise<void> {
    const key = `${workspace}/${tokenId}`;
    this.#pending.delete(key);
    this.#seen.delete(key);
    await this.#store.delete(`${PREFIX}${key}`);
  }
}

function parseUsage(value: unknown, key: string): { lastUsedAt: string } {
  return { lastUsedAt: storedString(storedObject(value, key), 'lastUsedAt', key) };
}
