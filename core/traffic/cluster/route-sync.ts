/**
 * Replicates the leader's gateway routes to the other replicas through the
 * state store, so that every replica serves workload traffic:
 *
 * - `RoutePublisher` (on the leader) keeps one key per own route under
 *   `gateway/routes/` equal to its route table, writing only what changed.
 * - `RouteFollower` (on the others) watches that prefix and replaces the
 *   followed entries of its table with what is stored, in one step.
 *
 * Neither deletes anything when it stops: the next leader's publisher
 * reconciles the keys with its own table, deleting what it does not serve.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { SvcError } from '../../model/errors.js';
import type { FollowedRoute, RouteTable } from '../gateway/route-table.js';
import { followPrefix, RETRY_AFTER_ERROR_MS } from '../../infra/state/follow-prefix.js';
import type { StateStore } from '../../model/store/types.js';
import { watchIndex } from '../../infra/state/watch-index.js';
import { decodeRoute, encodeRoute, routeKey, ROUTES_PREFIX } from './route-codec.js';

export interface RouteSyncOptions {
  readonly store: StateStore;
  readonly routes: RouteTable;
  /** Told about failed store operations (retried) and stored routes that cannot be read (skipped). */
  readonly report: (error: unknown) => void;
  /** The pause after a failure before the next attempt (default 1 s). */
  readonly retryMs?: number;
}

export interface RouteFollowerOptions extends RouteSyncOptions {
  /** Told after each reload put the leader's routes in the table (the registry starts watching their units). */
  readonly onApplied?: (routes: readonly FollowedRoute[]) => void;
}

/** How often the leader compares the stored routes with its table even when nothing changed. */
const AUDIT_INTERVAL_MS = 30_000;

interface FlushWaiter {
  readonly generation: number;
  resolve(): void;
  reject(error: unknown): void;
}

export class RoutePublisher {
  readonly #store: StateStore;
  readonly #routes: RouteTable;
  readonly #report: (error: unknown) => void;
  readonly #retryMs: number;
  readonly #stop = new AbortController();
  #unsubscribe: (() => void) | null = null;
  /** Counts changes of the own routes; a pass stores the table as it was at one generation. */
  #generation = 0;
  #storedGeneration = -1;
  /** What is stored under the prefix, key → JSON text; null when unknown (the next pass lists the store). */
  #stored: Map<string, string> | null = null;
  #waiters: FlushWaiter[] = [];
  /** The running pump; it loops until the stored generation caught up. */
  #pump: Promise<void> | null = null;
  readonly #auditMs: number;
  #audit: NodeJS.Timeout | undefined;

  constructor(options: RouteSyncOptions & { readonly auditMs?: number }) {
    this.#store = options.store;
    this.#routes = options.routes;
    this.#report = options.report;
    this.#retryMs = options.retryMs ?? RETRY_AFTER_ERROR_MS;
    this.#auditMs = options.auditMs ?? AUDIT_INTERVAL_MS;
  }

  /**
   * Reconciles the stored routes with the table (writing what differs,
   * deleting what a previous leader left) and then follows every change.
   * Resolves after the first reconcile; failures are reported and retried.
   */
  start(): Promise<void> {
    if (this.#unsubscribe === null && !this.#stop.signal.aborted) {
      this.#unsubscribe = this.#routes.onChange(() => {
        this.#generation++;
        this.#schedule();
      });
      this.#schedule();
      // A write another replica made after this one took over (a demoted leader's last one) would stay
      // until that route changed again: list the store now and then, and put back what differs.
      this.#audit = setInterval(() => {
        this.#stored = null;
        this.#generation++;
        this.#schedule();
      }, this.#auditMs).unref();
    }
    return this.flush();
  }

  /** Resolves once what the table holds now is stored; rejects if `close()` comes first. */
  flush(): Promise<void> {
    if (this.#storedGeneration >= this.#generation) return Promise.resolve();
    if (this.#stop.signal.aborted) return Promise.reject(closedError());
    return new Promise((resolve, reject) => this.#waiters.push({ generation: this.#generation, resolve, reject }));
  }

  /** Stops following the table (a store operation under way finishes); deletes nothing. */
  async close(): Promise<void> {
    this.#stop.abort();
    this.#unsubscribe?.();
    clearInterval(this.#audit);
    for (const waiter of this.#waiters.splice(0)) waiter.reject(closedError());
    await this.#pump;
  }

  #schedule(): void {
    if (this.#pump !== null || this.#stop.signal.aborted) return;
    // One pass per event-loop turn at most: changes made in the same turn are stored together.
    this.#pump = new Promise((resolve) => setImmediate(resolve))
      .then(() => this.#run())
      .finally(() => {
        this.#pump = null;
        if (this.#storedGeneration < this.#generation) this.#schedule(); // a change came after the loop's last look
      });
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted && this.#storedGeneration < this.#generation) {
      try {
        await this.#pass();
      } catch (error) {
        if (signal.aborted) return;
        this.#report(error);
        this.#stored = null; // what got stored is unknown: list the store again
        await sleep(this.#retryMs, undefined, { signal }).catch(() => undefined);
      }
    }
  }

  /** Makes the store hold the table's own routes as they are now, touching only keys that differ. */
  async #pass(): Promise<void> {
    const generation = this.#generation;
    const wanted = new Map<string, string>();
    for (const route of this.#routes.published()) wanted.set(routeKey(route.entry.prefix), encodeRoute(route));
    const stored = this.#stored ?? (await this.#list());
    const writes = [...wanted].filter(([key, text]) => stored.get(key) !== text);
    const deletes = [...stored.keys()].filter((key) => !wanted.has(key));
    // allSettled: no write of a failed pass may still land after the next pass has listed the store.
    const results = await Promise.allSettled([
      ...writes.map(async ([key, text]) => {
        await this.#store.put(key, text);
        stored.set(key, text);
      }),
      ...deletes.map(async (key) => {
        await this.#store.delete(key);
        stored.delete(key);
      }),
    ]);
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
    this.#stored = stored;
    this.#storedGeneration = generation;
    this.#waiters = this.#waiters.filter((waiter) => {
      if (waiter.generation > generation) return true;
      waiter.resolve();
      return false;
    });
  }

  async #list(): Promise<Map<string, string>> {
    const entries = await this.#store.list(ROUTES_PREFIX);
    return new Map(entries.map((entry) => [entry.key, entry.value.toString('utf8')]));
  }
}

export class RouteFollower {
  readonly #store: StateStore;
  readonly #routes: RouteTable;
  readonly #report: (error: unknown) => void;
  readonly #retryMs: number;
  readonly #onApplied: (routes: readonly FollowedRoute[]) => void;
  readonly #stop = new AbortController();
  #synced = false;
  #watching: Promise<void> | null = null;
  #firstLoad: Promise<void> | null = null;

  constructor(options: RouteFollowerOptions) {
    this.#store = options.store;
    this.#routes = options.routes;
    this.#report = options.report;
    this.#retryMs = options.retryMs ?? RETRY_AFTER_ERROR_MS;
    this.#onApplied = options.onApplied ?? (() => {});
  }

  /**
   * Loads the stored routes into the table, then watches them. Resolves after
   * the first successful load (failures are reported and retried); rejects if
   * `close()` comes first.
   */
  start(): Promise<void> {
    if (this.#firstLoad === null) {
      this.#firstLoad = new Promise((resolve, reject) => {
        this.#watching = this.#watch(resolve);
        void this.#watching.then(() => {
          if (!this.#synced) reject(closedError());
        });
      });
    }
    return this.#firstLoad;
  }

  /** True once the table holds what the store held at some point (after the first load). */
  synced(): boolean {
    return this.#synced;
  }

  /** Stops watching; the followed routes stay in the table (the caller decides when to drop them). */
  async close(): Promise<void> {
    this.#stop.abort();
    await this.#watching;
  }

  #watch(loaded: () => void): Promise<void> {
    return followPrefix({
      store: this.#store,
      prefix: ROUTES_PREFIX,
      signal: this.#stop.signal,
      report: this.#report,
      retryMs: this.#retryMs,
      reload: async () => {
        const since = await this.#reload();
        loaded();
        return since;
      },
    });
  }

  /** Replaces the followed routes with what is stored; returns the prefix's index read before listing (what the next watch waits from). */
  async #reload(): Promise<number> {
    const since = await watchIndex(this.#store, ROUTES_PREFIX);
    const entries = await this.#store.list(ROUTES_PREFIX);
    const routes: FollowedRoute[] = [];
    for (const entry of entries) {
      try {
        routes.push(decodeRoute(entry.key, entry.value.toString('utf8')));
      } catch (error) {
        this.#report(error);
      }
    }
    this.#routes.follow(routes);
    this.#onApplied(routes);
    this.#synced = true;
    return since;
  }
}

function closedError(): SvcError {
  return new SvcError('state_unavailable', 'gateway route sync was closed before the routes were in sync');
}
