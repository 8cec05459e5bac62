/**
 * The StateStore over Consul's KV HTTP API: one Consul call per method (see
 * docs/state.md). Keys live under a prefix (default `svc/`) and are escaped
 * into the characters every Consul release accepts (core/state/consul-keys.ts).
 * Compare-and-set is Consul's `?cas=<ModifyIndex>`; `index()` and `watch()`
 * use the prefix's `X-Consul-Index` and blocking queries.
 */
import { storeClosedError } from './closed.js';
import { SvcError } from '../errors.js';
import { backoffMs, ConsulHttp, ConsulHttpError, sleep, type ConsulCall, type ConsulResponse } from './consul-http.js';
import { escapeKey, keyPath, unescapeKey } from './consul-keys.js';
import { checkCas, checkKey, checkPrefix, compareKeys, foldKeys, valueBytes } from './key-rules.js';
import { DEFAULT_WATCH_WAIT_MS, MAX_WATCH_WAIT_MS, type CasOptions, type StateEntry, type StateStore, type WatchOptions } from './types.js';

export interface ConsulStateStoreOptions {
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

interface KvJson {
  Key: string;
  Value: string | null;
  CreateIndex: number;
  ModifyIndex: number;
}

export class ConsulStateStore implements StateStore {
  readonly #http: ConsulHttp;
  readonly #root: string;
  readonly #retryBaseMs: number;
  readonly #retryMaxMs: number;
  readonly #writes = new Set<Promise<unknown>>();
  readonly #watches = new Set<AbortController>();
  #closed = false;

  constructor(options: ConsulStateStoreOptions) {
    const prefix = options.prefix ?? 'svc/';
    if (!/^[A-Za-z0-9_\-/]+\/$/.test(prefix) || prefix.startsWith('/') || prefix.includes('//')) {
      throw new SvcError('config_invalid', `the Consul KV prefix must be letters, digits, "_", "-" and "/" segments ending in "/" (like "svc/"), not ${JSON.stringify(prefix)}`);
    }
    this.#root = prefix;
    this.#http = new ConsulHttp({ address: options.address, token: options.token, timeoutMs: options.timeoutMs });
    this.#retryBaseMs = options.retryBaseMs ?? 100;
    this.#retryMaxMs = options.retryMaxMs ?? 5000;
  }

  async get(key: string): Promise<StateEntry | null> {
    checkKey(key);
    const response = await this.#call({ path: this.#path(key) }, [404]);
    if (response.status === 404) return null;
    const [entry] = this.#entries(response);
    return entry ?? null;
  }

  async put(key: string, value: Uint8Array | string, options: CasOptions = {}): Promise<boolean> {
    checkKey(key);
    checkCas(key, options.cas);
    const body = valueBytes(key, value);
    return this.#write(async () => {
      const response = await this.#call({ method: 'PUT', path: this.#path(key), query: { cas: options.cas }, body });
      return parseBool(response);
    });
  }

  async list(prefix: string): Promise<StateEntry[]> {
    checkPrefix(prefix);
    const response = await this.#call({ path: this.#path(prefix), query: { recurse: true } }, [404]);
    if (response.status === 404) return [];
    return this.#entries(response).sort((a, b) => compareKeys(a.key, b.key));
  }

  async keys(prefix: string, separator?: string): Promise<string[]> {
    checkPrefix(prefix);
    // '/' is kept as it is by the escaping, so Consul can fold on it; any other separator is folded here.
    const query = { keys: true, separator: separator === '/' ? '/' : undefined };
    const response = await this.#call({ path: this.#path(prefix), query }, [404]);
    if (response.status === 404) return [];
    const keys = (parseJson(response) as string[]).map((k) => unescapeKey(k.slice(this.#root.length))).sort(compareKeys);
    return separator === '/' ? keys : foldKeys(keys, prefix, separator);
  }

  async delete(key: string, options: CasOptions = {}): Promise<boolean> {
    checkKey(key);
    checkCas(key, options.cas);
    return this.#write(async () => parseBool(await this.#call({ method: 'DELETE', path: this.#path(key), query: { cas: options.cas } })));
  }

  async deleteTree(prefix: string): Promise<void> {
    checkPrefix(prefix);
    await this.#write(async () => this.#call({ method: 'DELETE', path: this.#path(prefix), query: { recurse: true } }));
  }

  async index(): Promise<number> {
    // The index of a prefix list: the highest ModifyIndex or delete (tombstone) under it.
    const response = await this.#call({ path: this.#path(''), query: { keys: true, separator: '/' } }, [404]);
    return indexOf(response);
  }

  async watch(prefix: string, sinceIndex: number, options: WatchOptions = {}): Promise<number> {
    checkPrefix(prefix);
    if (!Number.isSafeInteger(sinceIndex) || sinceIndex < 0) throw new SvcError('bad_request', `a watch index must be a non-negative integer, not ${String(sinceIndex)}`);
    this.#checkOpen();
    if (options.signal?.aborted) throw options.signal.reason;
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    this.#watches.add(controller);
    try {
      return await this.#watch(prefix, sinceIndex, Math.min(Math.max(options.waitMs ?? DEFAULT_WATCH_WAIT_MS, 0), MAX_WATCH_WAIT_MS), controller.signal);
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
    await this.#http.close();
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
    const path = this.#path(prefix);
    const first = await this.#retrying({ path, query: { recurse: true }, signal }, deadline);
    let index = indexOf(first);
    let seen = this.#modifyIndexes(first);
    // Changed already, or an index this Consul never reached (another cluster, a restore): answer at once.
    // An empty prefix whose index passed `since` may hide a delete: answer too (possibly spuriously).
    if (since === 0 || index !== since) return index;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) return index;
      const response = await this.#retrying({ path, query: { recurse: true, index }, waitMs: left, signal }, deadline);
      const next = indexOf(response);
      // Went backwards (snapshot restore, tombstones reaped): the caller starts over from this one.
      if (next < index) return next;
      if (next === index) continue;
      const now = this.#modifyIndexes(response);
      const changed = [...now.values()].some((at) => at > since) || [...seen.keys()].some((key) => !now.has(key)) || (now.size > 0 && next > Math.max(...now.values()));
      if (changed) return next;
      seen = now;
      index = next;
    }
  }

  /** A read of a watch: failures are retried with exponential back-off while the wait lasts. */
  async #retrying(call: ConsulCall, deadline: number): Promise<ConsulResponse> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#call(call, [404]);
      } catch (error) {
        if (call.signal?.aborted) throw call.signal.reason;
        const delay = backoffMs(attempt, this.#retryBaseMs, this.#retryMaxMs);
        if (Date.now() + delay >= deadline) throw error;
        await sleep(delay, call.signal);
        if (call.waitMs !== undefined) call = { ...call, waitMs: Math.max(1, deadline - Date.now()) };
      }
    }
  }

  #modifyIndexes(response: ConsulResponse): Map<string, number> {
    if (response.status === 404) return new Map();
    return new Map((parseJson(response) as KvJson[]).map((e) => [e.Key, e.ModifyIndex]));
  }

  #path(key: string): string {
    return `/v1/kv/${keyPath(this.#root + escapeKey(key))}`;
  }

  #entries(response: ConsulResponse): StateEntry[] {
    return (parseJson(response) as KvJson[]).map((e) => ({
      key: unescapeKey(e.Key.slice(this.#root.length)),
      value: e.Value === null ? Buffer.alloc(0) : Buffer.from(e.Value, 'base64'),
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

  async #call(call: ConsulCall, allow: readonly number[] = []): Promise<ConsulResponse> {
    this.#checkOpen();
    try {
      return await this.#http.expect(call, allow);
    } catch (error) {
      if (call.signal?.aborted) throw call.signal.reason;
      throw mapError(error, this.#http.address);
    }
  }
}

function parseJson(response: ConsulResponse): unknown {
  try {
    return JSON.parse(response.body.toString('utf8'));
  } catch {
    throw new SvcError('state_unavailable', `Consul answered with something that is not JSON: ${response.body.toString('utf8').slice(0, 100)}`);
  }
}

function parseBool(response: ConsulResponse): boolean {
  const value = parseJson(response);
  if (typeof value !== 'boolean') throw new SvcError('state_unavailable', `Consul answered a KV write with ${JSON.stringify(value)} instead of true or false`);
  return value;
}

function indexOf(response: ConsulResponse): number {
  if (response.index === null) throw new SvcError('state_unavailable', 'Consul answered a KV read without a valid X-Consul-Index header');
  return response.index;
}


function mapError(error: unknown, address: string): SvcError {
  if (error instanceof SvcError) return error;
  if (error instanceof ConsulHttpError) {
    if (error.status === 403) {
      return new SvcError('state_unavailable', `Consul refused svc's state store access (${error.message})`, {
        hint: 'Give svc\'s Consul token write access to its KV prefix: key_prefix "svc/" { policy = "write" } (see docs/operators.md).', cause: error,
      });
    }
    if (error.status === 413) return new SvcError('state_value_too_large', `Consul refused the value as too large (${error.message})`, { cause: error });
    if (error.status === 400) return new SvcError('state_key_invalid', `Consul refused the key (${error.message})`, { cause: error });
    return new SvcError('state_unavailable', `Consul could not take the state store operation (${error.message})`, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new SvcError('state_unavailable', `svc could not reach Consul at ${address} for its state (${message})`, {
    hint: 'Check that the Consul agent runs and that the configured address is right.', cause: error,
  });
}
