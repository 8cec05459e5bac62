/**
 * The leader's side of shared scaling: what the other replicas' gateways
 * hold (their LoadReporter records under `gateway/load/`), for the
 * autoscaler to add to its own admission's numbers.
 *
 * Every time is the leader's own: a record counts as fresh while it was
 * rewritten (a new modifyIndex) within `freshMs` of now, by the leader's
 * clock, and a reported idle duration becomes a last use by subtracting it
 * from the time the leader received the record. Stale records still tell when
 * an instance was last used (a dead replica's last use expires with
 * keep_warm like any other), but their requests in flight and queued no
 * longer count: a replica that stopped rewriting them may be dead.
 */
import { storedJson } from '../../model/store/stored-fields.js';
import type { PeerLoadView } from '../../services/autoscale/types.js';
import { isStoreClosed } from '../../infra/state/closed.js';
import { followPrefix } from '../../infra/state/follow-prefix.js';
import type { StateStore } from '../../model/store/types.js';
import { watchIndex } from '../../infra/state/watch-index.js';
import { LOAD_PREFIX, loadKey, parseLoadRecord, type DecodedLoad } from './load-record.js';

export interface PeerLoadOptions {
  readonly store: StateStore;
  /** This replica's id: its own record is its admission's, which the autoscaler reads directly. */
  readonly self: string;
  /** How long a record counts after it was last rewritten (default 5 s). */
  readonly freshMs?: number;
  /** Records that cannot be decoded (once each) and failed reloads (retried a second later). */
  readonly report: (error: unknown) => void;
  /** After a reload, the units whose requests in flight or queued changed: evaluate them now. */
  readonly onChange?: (units: string[]) => void;
  /** The leader's clock (default Date.now; tests move it). */
  readonly now?: () => number;
}

interface Received {
  readonly modifyIndex: number;
  /** When this replica read this version of the record (its own clock). */
  readonly receivedAt: number;
  /** Null when the record could not be decoded (reported once). */
  readonly load: DecodedLoad | null;
}

/**
 * A record unchanged for this long is deleted (compare-and-set, so a rewrite
 * wins): a replica that died (killed, its machine lost) never deletes its own.
 * A live idle replica loses nothing it needs: it writes again when busy.
 */
const FORGET_AFTER_MS = 24 * 60 * 60_000;

export class PeerLoad implements PeerLoadView {
  readonly #options: PeerLoadOptions;
  readonly #now: () => number;
  readonly #freshMs: number;
  readonly #selfKey: string;
  #received = new Map<string, Received>();
  readonly #stop = new AbortController();
  #watching: Promise<void> = Promise.resolve();

  constructor(options: PeerLoadOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#freshMs = options.freshMs ?? 5000;
    this.#selfKey = loadKey(options.self);
  }

  /** Reads the records once, then follows their changes until `close()`. A failed first read is reported and retried. */
  async start(): Promise<void> {
    let since = 0;
    try {
      since = await this.#reload();
    } catch (error) {
      if (isStoreClosed(error)) return;
      this.#options.report(error);
    }
    this.#watching = followPrefix({
      store: this.#options.store,
      prefix: LOAD_PREFIX,
      signal: this.#stop.signal,
      since,
      reload: () => this.#reload(),
      report: this.#options.report,
    });
  }

  /** Requests in flight and queued for a unit on the other replicas (fresh records only). */
  load(unit: string): { inFlight: number; queued: number } {
    let inFlight = 0;
    let queued = 0;
    const now = this.#now();
    for (const received of this.#received.values()) {
      const load = received.load?.get(unit);
      if (!load || !this.#fresh(received, now)) continue;
      queued += load.queued;
      for (const instance of load.instances.values()) inFlight += instance.inFlight;
    }
    return { inFlight, queued };
  }

  /** One instance's use on the other replicas: requests in flight (fresh records) and the last use (any record), by this replica's clock. */
  use(instanceId: string): { inFlight: number; lastActiveAt: number | undefined } {
    let inFlight = 0;
    let lastActiveAt: number | undefined;
    const now = this.#now();
    for (const received of this.#received.values()) {
      for (const unit of received.load?.values() ?? []) {
        const instance = unit.instances.get(instanceId);
        if (!instance) continue;
        if (this.#fresh(received, now)) inFlight += instance.inFlight;
        if (instance.idleMs !== null) lastActiveAt = Math.max(lastActiveAt ?? -Infinity, received.receivedAt - instance.idleMs);
      }
    }
    return { inFlight, lastActiveAt };
  }

  async close(): Promise<void> {
    this.#stop.abort();
    await this.#watching;
  }

  #fresh(received: Received, now: number): boolean {
    return now - received.receivedAt <= this.#freshMs;
  }

  /** Re-reads the records, keeping those whose modifyIndex did not change; returns the prefix's index read before listing (what the next watch waits from). */
  async #reload(): Promise<number> {
    const { store, report } = this.#options;
    const since = await watchIndex(store, LOAD_PREFIX);
    const entries = await store.list(LOAD_PREFIX);
    const now = this.#now();
    const next = new Map<string, Received>();
    for (const entry of entries) {
      if (entry.key === this.#selfKey) continue;
      const previous = this.#received.get(entry.key);
      if (previous?.modifyIndex === entry.modifyIndex) {
        if (now - previous.receivedAt >= FORGET_AFTER_MS) {
          void store.delete(entry.key, { cas: entry.modifyIndex }).catch(report);
          continue;
        }
        next.set(entry.key, previous);
        continue;
      }
      let load: DecodedLoad | null = null;
      try {
        load = storedJson(entry, parseLoadRecord);
      } catch (error) {
        report(error);
      }
      next.set(entry.key, { modifyIndex: entry.modifyIndex, receivedAt: now, load });
    }
    const changed = this.#changedUnits(next, now);
    this.#received = next;
    if (changed.length > 0) this.#options.onChange?.(changed);
    return since;
  }

  /** Units whose counts (queued, in flight per instance) differ between the records as they counted before and now. */
  #changedUnits(next: ReadonlyMap<string, Received>, now: number): string[] {
    const changed = new Set<string>();
    for (const key of new Set([...this.#received.keys(), ...next.keys()])) {
      const before = this.#received.get(key);
      const after = next.get(key);
      if (before === after) continue;
      const old = before && this.#fresh(before, now) ? before.load : null;
      const current = after?.load ?? null;
      for (const unit of new Set([...(old?.keys() ?? []), ...(current?.keys() ?? [])])) {
        if (counts(old, unit) !== counts(current, unit)) changed.add(unit);
      }
    }
    return [...changed].sort();
  }
}

/** A unit's counts in one record, '' when all are zero (an idle unit and an absent one count the same). */
function counts(load: DecodedLoad | null, unit: string): string {
  const entry = load?.get(unit);
  const busy = [...(entry?.instances ?? [])].flatMap(([id, { inFlight }]) => (inFlight > 0 ? [[id, inFlight]] : []));
  return !entry || (entry.queued === 0 && busy.length === 0) ? '' : JSON.stringify([entry.queued, busy]);
}
