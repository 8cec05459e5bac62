/**
 * The follower's side of shared scaling: only the leader's autoscaler starts
 * and stops containers, but every replica's gateway queues and forwards
 * requests. Each replica writes what its own admission holds under
 * `gateway/load/<replicaId>`, so that the leader starts a container for a
 * request waiting here and keeps one warm that this replica uses.
 *
 * A busy replica rewrites its record every `intervalMs` even when nothing
 * changed: the leader drops numbers not rewritten for a few seconds, so a
 * replica that died cannot hold containers up forever. An idle one writes
 * once more when something changed (counts back to zero, a new last use),
 * then nothing.
 */
import { isStoreClosed } from '../../infra/state/closed.js';
import type { Admission } from '../gateway/admission.js';
import type { ServiceRegistry } from '../../infra/registry/types.js';
import { putJson } from '../../model/store/json.js';
import type { StateStore } from '../../model/store/types.js';
import { loadKey, type InstanceLoad, type LoadRecord, type UnitLoad } from './load-record.js';

export interface LoadReporterOptions {
  readonly store: StateStore;
  /** Names this replica's key; unique among the replicas. */
  readonly replicaId: string;
  readonly admission: Admission;
  readonly registry: ServiceRegistry;
  /** The unit keys this replica serves. */
  readonly units: () => Iterable<string>;
  /** How often the record is rewritten while requests are in flight or queued (default 1 s). */
  readonly intervalMs?: number;
  /** Failed writes; the next tick retries. */
  readonly report: (error: unknown) => void;
  /** The clock admission's last-use times are read against (default Date.now; tests shift it). */
  readonly now?: () => number;
}

/** A burst of queued requests makes one write. */
const NOTICE_DELAY_MS = 20;
/**
 * How long a request refused at zero containers (`max_pending_tasks` 0: it
 * could not wait) counts as one queued request: the demand that starts a
 * container for its retry, as on the leader.
 */
const REFUSED_DEMAND_MS = 5_000;

interface Snapshot {
  readonly record: LoadRecord;
  /** What a rewrite is compared by: counts and last-use times, not the idle durations that grow by themselves. */
  readonly signature: string;
  readonly busy: boolean;
}

export class LoadReporter {
  readonly #options: LoadReporterOptions;
  readonly #key: string;
  readonly #now: () => number;
  readonly #ticker: NodeJS.Timeout;
  readonly #noticed = new Set<string>();
  /** When a request was last refused per unit (this replica's clock). */
  readonly #refusedAt = new Map<string, number>();
  #soon: NodeJS.Timeout | undefined;
  #writing: Promise<void> | undefined;
  /** A notice came during a write: look again after it. */
  #again = false;
  /** The signature of the last record stored; an idle replica starts with nothing to say. */
  #written: string;
  #closed = false;

  constructor(options: LoadReporterOptions) {
    this.#options = options;
    this.#key = loadKey(options.replicaId);
    this.#now = options.now ?? Date.now;
    this.#written = JSON.stringify([]);
    this.#ticker = setInterval(() => this.#flush(true), options.intervalMs ?? 1000);
    this.#ticker.unref();
  }

  /** A request queued (or, `refused`, could not wait) for `unit` here: the leader should know soon. */
  notice(unit: string, refused = false): void {
    if (this.#closed) return;
    this.#noticed.add(unit);
    if (refused) this.#refusedAt.set(unit, this.#now());
    this.#soon ??= setTimeout(() => {
      this.#soon = undefined;
      this.#flush(false);
    }, NOTICE_DELAY_MS).unref();
  }

  /** Stops writing and deletes the record (best effort: a stale record is ignored by the leader anyway). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#ticker);
    if (this.#soon) clearTimeout(this.#soon);
    await this.#writing;
    try {
      await this.#options.store.delete(this.#key);
    } catch (error) {
      if (!isStoreClosed(error)) this.#options.report(error);
    }
  }

  /** Writes when something changed, or on a heartbeat while busy; one write at a time. */
  #flush(heartbeat: boolean): void {
    if (this.#closed) return;
    if (this.#writing) {
      this.#again = true;
      return;
    }
    const { record, signature, busy } = this.#snapshot();
    if (signature === this.#written && !(heartbeat && busy)) return;
    this.#writing = this.#write(record, signature).finally(() => {
      this.#writing = undefined;
      if (!this.#again) return;
      this.#again = false;
      this.#flush(false);
    });
  }

  async #write(record: LoadRecord, signature: string): Promise<void> {
    try {
      await putJson(this.#options.store, this.#key, record);
      this.#written = signature;
    } catch (error) {
      if (!this.#closed) this.#options.report(error);
    }
  }

  #snapshot(): Snapshot {
    const { admission, registry } = this.#options;
    const now = this.#now();
    const names = new Set(this.#options.units());
    for (const unit of this.#noticed) names.add(unit);
    this.#noticed.clear();
    for (const [unit, at] of this.#refusedAt) {
      if (now - at < REFUSED_DEMAND_MS) names.add(unit);
      else this.#refusedAt.delete(unit);
    }
    const units: Record<string, UnitLoad> = {};
    const signature: unknown[] = [];
    let busy = false;
    for (const unit of [...names].sort()) {
      const waiting = admission.load(unit).queued;
      const queued = this.#refusedAt.has(unit) ? Math.max(waiting, 1) : waiting;
      const instances: Record<string, InstanceLoad> = {};
      const used: unknown[] = [];
      for (const { id } of registry.instances(unit)) {
        const { inFlight, lastActiveAt } = admission.use(id);
        if (inFlight === 0 && lastActiveAt === undefined) continue;
        instances[id] = { inFlight, idleMs: lastActiveAt === undefined ? null : Math.max(0, now - lastActiveAt) };
        used.push([id, inFlight, lastActiveAt ?? null]);
        busy ||= inFlight > 0;
      }
      if (queued === 0 && used.length === 0) continue;
      busy ||= queued > 0;
      units[unit] = { queued, instances };
      signature.push([unit, queued, used]);
    }
    return { record: { version: 1, units }, signature: JSON.stringify(signature), busy };
  }
}
