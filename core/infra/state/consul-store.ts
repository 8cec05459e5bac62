/**
 * The StateStore over Consul's KV HTTP API: one Consul call per method (see
 * docs/state.md). Keys live under a prefix (default `svc/`) and are escaped
 * into the characters every Consul release accepts (core/infra/state/consul-keys.ts).
 * Compare-and-set is Consul's `?cas=<ModifyIndex>`; `index()` and `watch()`
 * use the prefix's `X-Consul-Index` and blocking queries.
 */
import type { CallObserver } from '../metrics/platform-metrics.js';
import { storeClosedError } from './closed.js';
import { SvcError } from '../../model/errors.js';
import { backoffMs, sleep } from './backoff.js';
import { ConsulClient, ConsulError, type KvEntry, type Read, type ReadOptions } from './consul-client.js';
import { escapeKey, unescapeKey } from './consul-keys.js';
import { checkCas, checkKey, checkPrefix, compareKeys, foldKeys, valueBytes } from './key-rules.js';
import {
  DEFAULT_WATCH_WAIT_MS,
  MAX_WATCH_WAIT_MS,
  type CasOptions,
  type StateEntry,
  type StateStore,
  type WatchOptions,
} from '../../model/store/types.js';

export interface ConsulStateStoreOptions {
  /** Told how long each non-blocking Consul call took (`/metrics`). */
  readonly observe?: CallObserver | undefined;
  /** Consul agent address, e.g. `http://127.0.0.1:8500`. */
  readonly address: string;
  /** ACL token (`X-Consul-Token`); needs `key_prefix "<prefix>" { policy = "write" }`. */
  readonly token?: string;
  /** Where svc's keys live in Consul KV (default `svc/`): must end with `/`. */
  readonly prefix?: string;
  /** Timeout of one non-blocking call (default 10 s). */
  readonly timeoutMs?: number;
  /** Back-off of a watch whose blocking query fails: first delay and cap (default 100 ms, 5 s). */
  readonly retryBaseMs?: number;
  readonly retryMaxMs?: number;
}

export class ConsulStateStore implements StateStore {
  readonly #consul: ConsulClient;
  readonly #root: string;
  readonly #retryBaseMs: number;
  readonly #retryMaxMs: number;
  readonly #writes = new Set<Promise<unknown>>();
  readonly #watches = new Set<AbortController>();
  #closed = false;

  constructor(options: ConsulStateStoreOptions) {
    const prefix = options.prefix ?? 'svc/';
    if (!/^[A-Za-z0-9_\-/]+\/$/.test(prefix) || prefix.startsWith('/') || prefix.includes('//')) {
      throw new SvcError(
        'config_invalid',
        `the Consul KV prefix must be letters, digits, "_", "-" and "/" segments ending in "/" (like "svc/"), not ${JSON.stringify(prefix)}`,
      );
    }
    this.#root = prefix;
    this.#consul = new ConsulClient({
      address: options.address,
      token: options.token,
      timeoutMs: options.timeoutMs,
      observe: options.observe,
    });
    this.#retryBaseMs = options.retryBaseMs ?? 100;
    this.#retryMaxMs = options.retryMaxMs ?? 5000;
  }

  async get(key: string): Promise<StateEntry | null> {
    checkKey(key);
    const [entry] = this.#entries(await this.#call(() => this.#consul.kvGet(this.#key(key))));
    return entry ?? null;
  }

  async put(key: string, value: Uint8Array | string, options: CasOptions = {}): Promise<boolean> {
    checkKey(key);
    checkCas(key, options.cas);
    const body = valueBytes(key, value);
    return this.#write(() => this.#call(() => this.#consul.kvSet(this.#key(key), body, { cas: options.cas })));
  }

  async list(prefix: string): Promise<StateEntry[]> {
    checkPrefix(prefix);
    const read = await this.#call(() => this.#consul.kvGet(this.#key(prefix), { recurse: true }));
    return this.#entries(read).sort((a, b) => compareKeys(a.key, b.key));
  }

  async keys(prefix: string, separator?: string): Promise<string[]> {
    checkPrefix(prefix);
    // '/' is kept as it is by the escaping, so Consul can fold on it; any other separator is folded here.
    const read = await this.#call(() => this.#consul.kvKeys(this.#key(prefix), { separator: separator === '/' ? '/' : undefined }));
    const keys = read.value.map((k) => unescapeKey(k.slice(this.#root.length))).sort(compareKeys);
    return separator === '/' ? keys : foldKeys(keys, prefix, separator);
  }

  async delete(key: string, options: CasOptions = {}): Promise<boolean> {
    checkKey(key);
    checkCas(key, options.cas);
    return this.#write(() => this.#call(() => this.#consul.kvDelete(this.#key(key), { cas: options.cas })));
  }

  async deleteTree(prefix: string): Promise<void> {
    checkPrefix(prefix);
    await this.#write(() => this.#call(() => this.#consul.kvDelete(this.#key(prefix), { recurse: true })));
  }

  async index(): Promise<number> {
    // The index of a prefix list: the highest ModifyIndex or delete (tombstone) under it.
    return indexOf(await this.#call(() => this.#consul.kvKeys(this.#root, { separator: '/' })));
  }

  async watch(prefix: string, sinceIndex: number, options: WatchOptions = {}): Promise<number> {
    checkPrefix(prefix);
    if (!Number.isSafeInteger(sinceIndex) || sinceIndex < 0)
      throw new SvcError('bad_request', `a watch index must be a non-negative integer, not ${String(sinceIndex)}`);
    this.#checkOpen();
    if (options.signal?.aborted) throw options.signal.reason;
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    this.#watches.add(controller);
    try {
      return await this.#watch(
        prefix,
        sinceIndex,
        Math.min(Math.max(options.waitMs ?? DEFAULT_WATCH_WAIT_MS, 0), MAX_WATCH_WAIT_MS),
        controller.signal,
      );
    } catch (error) {
      if (controller.signal.aborted) throw controller.signal.reason;
      throw error;
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      this.#watches.delete(controller);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    while (this.#writes.size > 0) await Promise.allSettled([...this.#writes]);
    for (const controller of this.#watches) controller.abort(storeClosedError());
    this.#consul.close();
  }

  /**
   * A blocking query on the prefix. Consul's index for a prefix is the
   * highest ModifyIndex or tombstone under it, but for a prefix with neither
   * it is the whole KV table's index: then any write anywhere wakes the query
   * (a spurious return Consul allows). Those are told apart from real changes
   * by the entries: a new ModifyIndex, a key gone, or (entries present) an
   * index above them all, which only a tombstone under the prefix can give.
   */
  async #watch(prefix: string, since: number, waitMs: number, signal: AbortSignal): Promise<number> {
    const deadline = Date.now() + waitMs;
    const key = this.#key(prefix);
    const first = await this.#retrying(key, { signal }, deadline);
    let index = indexOf(first);
    let seen = modifyIndexes(first);
    // Changed already, or an index this Consul never reached (another cluster, a restore): answer at once.
    // An empty prefix whose index passed `since` may hide a delete: answer too (possibly spuriously).
    if (since === 0 || index !== since) return index;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) return index;
      const read = await this.#retrying(key, { signal, block: { index, waitMs: left } }, deadline);
      const next = indexOf(read);
      // Went backwards (snapshot restore, tombstones reaped): the caller starts over from this one.
      if (next < index) return next;
      if (next === index) continue;
      const now = modifyIndexes(read);
      const changed =
        [...now.values()].some((at) => at > since) ||
        [...seen.keys()].some((k) => !now.has(k)) ||
        (now.size > 0 && next > Math.max(...now.values()));
      if (changed) return next;
      seen = now;
      index = next;
    }
  }

  /** A read of a watch: failures are retried with exponential back-off while the wait lasts. */
  async #retrying(key: string, options: ReadOptions, deadline: number): Promise<Read<KvEntry[]>> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#call(() => this.#consul.kvGet(key, { ...options, recurse: true }), options.signal);
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason;
        const delay = backoffMs(attempt, this.#retryBaseMs, this.#retryMaxMs);
        if (Date.now() + delay >= deadline) throw error;
        await sleep(delay, options.signal);
        if (options.block !== undefined)
          options = { ...options, block: { index: options.block.index, waitMs: Math.max(1, deadline - Date.now()) } };
      }
    }
  }

  /** The Consul key of a state key (or prefix): under the root, escaped. */
  #key(key: string): string {
    return this.#root + escapeKey(key);
  }

  #entries(read: Read<KvEntry[]>): StateEntry[] {
    return read.value.map((e) => ({
      key: unescapeKey(e.Key.slice(this.#root.length)),
      value: e.Value,
      createIndex: e.CreateIndex,
      modifyIndex: e.ModifyIndex,
    }));
  }

  #checkOpen(): void {
    if (this.#closed) throw storeClosedError();
  }

  async #write<T>(run: () => Promise<T>): Promise<T> {
    this.#checkOpen();
    const promise = run();
    this.#writes.add(promise);
    try {
      return await promise;
    } finally {
      this.#writes.delete(promise);
    }
  }

  /** One Consul call of the store, its failure mapped into svc's errors (an abort passes through). */
  async #call<T>(run: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    this.#checkOpen();
    try {
      return await run();
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw mapError(error, this.#consul.address);
    }
  }
}

function modifyIndexes(read: Read<KvEntry[]>): Map<string, number> {
  return new Map(read.value.map((e) => [e.Key, e.ModifyIndex]));
}

function indexOf(read: Read<unknown>): number {
  if (read.index === null) throw new SvcError('state_unavailable', 'Consul answered a KV read without a valid X-Consul-Index header');
  return read.index;
}

function mapError(error: unknown, address: string): SvcError {
  if (error instanceof SvcError) return error;
  if (error instanceof ConsulError) {
    if (error.status === 403) {
      return new SvcError('state_unavailable', `Consul refused svc's state store access (${error.message})`, {
        hint: 'Give svc\'s Consul token write access to its KV prefix: key_prefix "svc/" { policy = "write" } (see docs/operators.md).',
        cause: error,
      });
    }
    if (error.status === 413)
      return new SvcError('state_value_too_large', `Consul refused the value as too large (${error.message})`, { cause: error });
    if (error.status === 400) return new SvcError('state_key_invalid', `Consul refused the key (${error.message})`, { cause: error });
    return new SvcError('state_unavailable', `Consul could not take the state store operation (${error.message})`, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new SvcError('state_unavailable', `svc could not reach Consul at ${address} for its state (${message})`, {
    hint: 'Check that the Consul agent runs and that the configured address is right.',
    cause: error,
  });
}
