/**
 * The state store: durable key/value state of the control plane (apps,
 * deployments and their versions, bundles, workspaces, accounts, tokens,
 * device codes). Its semantics are Consul KV's, so that the embedded file
 * store and a Consul KV store are interchangeable; every method maps onto one
 * call of Consul's HTTP KV API (noted on each). See docs/state.md.
 */

/** Consul's default `kv_max_value_size`: values up to 512 KiB, inclusive. */
export const MAX_VALUE_BYTES = 512 * 1024;
/** Keys up to 512 bytes of UTF-8. */
export const MAX_KEY_BYTES = 512;
/** Consul's default and maximum blocking-query waits. */
export const DEFAULT_WATCH_WAIT_MS = 5 * 60_000;
export const MAX_WATCH_WAIT_MS = 10 * 60_000;

/** One stored key. `GET /v1/kv/<key>` → `{Key, Value, CreateIndex, ModifyIndex}`. */
export interface StateEntry {
  readonly key: string;
  /** The stored bytes (a copy: changing it changes nothing stored). Strings are stored as UTF-8. */
  readonly value: Buffer;
  /** The store index of the write that created the key (kept across updates). */
  readonly createIndex: number;
  /** The store index of the last write to the key; what `cas` compares with. */
  readonly modifyIndex: number;
}

export interface CasOptions {
  /**
   * Compare-and-set: 0 writes only if the key is absent; N > 0 only if the
   * key's modifyIndex is N. Absent: unconditional.
   */
  readonly cas?: number;
}

export interface WatchOptions {
  /** Aborting rejects the watch with the signal's reason. */
  readonly signal?: AbortSignal;
  /** How long to block at most (default 5 min, capped at 10 min, like Consul). */
  readonly waitMs?: number;
}

export interface StateStore {
  /**
   * True when writes started together are made durable in the order they were started, in one
   * batch (the embedded stores: one log append and one fsync), so that a caller may start a write
   * that depends on an earlier one without waiting for it. Absent (Consul): each write is its own
   * request, and they may land in any order.
   */
  readonly ordersWrites?: boolean;

  /** `GET /v1/kv/<key>`: the entry, or null when absent. */
  get(key: string): Promise<StateEntry | null>;

  /**
   * `PUT /v1/kv/<key>[?cas=N]`: stores `value` (a string is stored as UTF-8).
   * Resolves once the write is durable. False when `cas` did not match (nothing
   * written); a put without `cas` always resolves true.
   */
  put(key: string, value: Uint8Array | string, options?: CasOptions): Promise<boolean>;

  /** `GET /v1/kv/<prefix>?recurse`: every entry whose key starts with `prefix` (a string prefix, not a folder), sorted by the keys' UTF-8 bytes. */
  list(prefix: string): Promise<StateEntry[]>;

  /**
   * `GET /v1/kv/<prefix>?keys[&separator=S]`: the keys under `prefix`, sorted.
   * With a separator, each key is cut after the first separator following the
   * prefix and duplicates are dropped, so `keys('apps/', '/')` lists one level.
   */
  keys(prefix: string, separator?: string): Promise<string[]>;

  /**
   * `DELETE /v1/kv/<key>[?cas=N]`: removes the key. Without `cas` always true.
   * With `cas` it deletes only when the key's modifyIndex is N and returns
   * false otherwise; like Consul, a key that is already absent returns true.
   */
  delete(key: string, options?: CasOptions): Promise<boolean>;

  /** `DELETE /v1/kv/<prefix>?recurse`: removes every key starting with `prefix` ('' is everything). */
  deleteTree(prefix: string): Promise<void>;

  /**
   * The store's index (`X-Consul-Index`): it grows with every write, deletes
   * included, and is never 0. Every entry's modifyIndex is at most this.
   */
  index(): Promise<number>;

  /**
   * A blocking query (`GET /v1/kv/<prefix>?recurse&index=N&wait=W`): resolves
   * as soon as a key under `prefix` is written or deleted at an index above
   * `sinceIndex`, or when the wait ends, with the store index to pass next.
   * Returning does not guarantee a change: re-read and compare. A `sinceIndex`
   * of 0 (or one the store never reached) returns at once.
   */
  watch(prefix: string, sinceIndex: number, options?: WatchOptions): Promise<number>;

  /** Finishes acknowledged writes, ends pending watches and releases the store. */
  close(): Promise<void>;
}
