/**
 * What each workload used, for `svc usage`: every `intervalMs` the meter reads each running container's
 * cgroup counters (the driver's `usage`), adds the CPU seconds each used since its last reading and the
 * memory it held over the interval (GiB-seconds) to its workload's hour, and keeps the hours in the state
 * store (`usage/<workspace>/<YYYY-MM-DDTHH>`), merged with compare-and-set so replicas never lose each
 * other's figures. A container's first reading counts everything since it started; what it uses after its
 * last reading and before it stops is not counted (at most one interval of it).
 */
import type { DeploymentRef } from '../../model/deployment-keys.js';
import type { SchedulerDriver } from '../../infra/scheduler/types.js';
import { getJson, putJson } from '../../model/store/json.js';
import { storedObject } from '../../model/store/stored-fields.js';
import type { StateStore } from '../../model/store/types.js';
import { addUsage, NO_USAGE, usageFrom, type UsageFigures } from './figures.js';

export type { UsageFigures } from './figures.js';

/** One hour of a workspace: figures by `<app>/<workload>`. */
export type UsageHour = Readonly<Record<string, UsageFigures>>;

const PREFIX = 'usage/';
/** What `svc usage --since` reaches at most (90 days), kept by default. */
export const DEFAULT_USAGE_RETENTION_DAYS = 90;
const GIB = 1024 ** 3;

export const usageKey = (workspace: string, hour: string) => `${PREFIX}${workspace}/${hour}`;

/** `2026-11-30T14` of a time: the hour its figures go to (UTC). */
export function hourOf(time: number): string {
  return new Date(time).toISOString().slice(0, 13);
}

export interface UsageMeterOptions {
  readonly store: StateStore;
  readonly driver: Pick<SchedulerDriver, 'usage'>;
  /** The deployed and previewed workloads now: their refs and the unit key of each that runs. */
  readonly units: () => readonly {
    readonly ref: DeploymentRef;
    readonly workload: string;
    readonly unit: string;
    /** What each of its containers reserves (`memory=`), in MiB. */
    readonly memoryMiB: number;
    /** Calls it answered so far (a counter; a run's), when it counts them. */
    readonly calls?: number;
  }[];
  /** What the gateway answered for a unit so far: requests and bytes (counters); absent: none counted. */
  readonly traffic?: (unit: string) => { readonly requests: number; readonly bytesIn: number; readonly bytesOut: number };
  readonly intervalMs?: number;
  /** Hours older than this many days are deleted (once an hour); absent: kept. */
  readonly retentionDays?: number;
  readonly clock?: () => number;
  readonly report: (error: unknown) => void;
  /** Told what each workload used at each reading (the Prometheus counters). */
  readonly counted?: (ref: DeploymentRef, workload: string, figures: Pick<UsageFigures, 'cpuSeconds' | 'memoryGiBSeconds'>) => void;
}

export class UsageMeter {
  readonly #options: UsageMeterOptions;
  /** Each container's CPU seconds at its last reading. */
  readonly #cpuSeen = new Map<string, number>();
  /** Each unit's traffic counters at its last reading. */
  readonly #trafficSeen = new Map<string, { readonly requests: number; readonly bytesIn: number; readonly bytesOut: number }>();
  /** Each unit's answered calls at its last reading. */
  readonly #callsSeen = new Map<string, number>();
  #lastAt: number | null = null;
  /** The hour of the last pruning: it runs once an hour. */
  #prunedHour: string | null = null;
  #timer: NodeJS.Timeout | null = null;
  #sampling: Promise<void> = Promise.resolve();

  constructor(options: UsageMeterOptions) {
    this.#options = options;
  }

  start(): void {
    if (this.#timer !== null || this.#options.driver.usage === undefined) return;
    this.#timer = setInterval(() => void this.sample().catch(this.#options.report), this.#options.intervalMs ?? 15_000);
    this.#timer.unref();
  }

  stop(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    return this.#sampling.catch(() => {});
  }

  /** Reads every running container once and adds what each used since its last reading (one reading at a time). */
  sample(): Promise<void> {
    this.#sampling = this.#sampling.catch(() => {}).then(() => this.#sample());
    return this.#sampling;
  }

  async #sample(): Promise<void> {
    const { driver, clock = Date.now } = this.#options;
    if (driver.usage === undefined) return;
    const now = clock();
    const elapsed = this.#lastAt === null ? 0 : (now - this.#lastAt) / 1000;
    this.#lastAt = now;
    const byWorkspace = new Map<string, Map<string, UsageFigures>>();
    const seen = new Set<string>();
    const add = (ref: DeploymentRef, workload: string, used: Partial<UsageFigures>) => {
      const figures = byWorkspace.get(ref.workspace) ?? new Map<string, UsageFigures>();
      byWorkspace.set(ref.workspace, figures);
      const name = `${ref.app}/${workload}`;
      figures.set(name, addUsage(figures.get(name) ?? NO_USAGE, used));
    };
    for (const { ref, workload, unit, memoryMiB, calls } of this.#options.units()) {
      seen.add(unit);
      if (calls !== undefined) {
        const added = Math.max(0, calls - (this.#callsSeen.get(unit) ?? 0));
        this.#callsSeen.set(unit, calls);
        if (added > 0) add(ref, workload, { calls: added });
      }
      const traffic = this.#options.traffic?.(unit);
      if (traffic !== undefined) {
        const before = this.#trafficSeen.get(unit);
        this.#trafficSeen.set(unit, { ...traffic });
        const since = (name: 'requests' | 'bytesIn' | 'bytesOut') => Math.max(0, traffic[name] - (before?.[name] ?? 0));
        if (since('requests') > 0)
          add(ref, workload, { requests: since('requests'), bytesIn: since('bytesIn'), bytesOut: since('bytesOut') });
      }
      for (const [id, used] of driver.usage(unit)) {
        seen.add(id);
        const cpu = used.cpuSeconds ?? 0;
        const added = Math.max(0, cpu - (this.#cpuSeen.get(id) ?? 0));
        this.#cpuSeen.set(id, cpu);
        const figures = {
          cpuSeconds: added,
          memoryGiBSeconds: (used.memoryBytes / GIB) * elapsed,
          memoryReservedGiBSeconds: (memoryMiB / 1024) * elapsed,
          gpuSeconds: (used.gpus ?? 0) * elapsed,
        };
        add(ref, workload, figures);
        this.#options.counted?.(ref, workload, figures);
      }
    }
    for (const seenAt of [this.#cpuSeen, this.#trafficSeen, this.#callsSeen])
      for (const id of [...seenAt.keys()]) if (!seen.has(id)) seenAt.delete(id);
    const hour = hourOf(now);
    await Promise.all([...byWorkspace].map(([workspace, figures]) => this.#add(workspace, hour, figures)));
    if (this.#prunedHour !== hour) await this.#prune(now);
    this.#prunedHour = hour;
  }

  /** Deletes every workspace's hours older than the retention (hour keys sort as they read). */
  async #prune(now: number): Promise<void> {
    const { retentionDays, store } = this.#options;
    if (retentionDays === undefined) return;
    const oldest = hourOf(now - retentionDays * 24 * 3_600_000);
    const expired = (await store.keys(PREFIX)).filter((key) => key.slice(key.lastIndexOf('/') + 1) < oldest);
    for (const key of expired) await store.delete(key);
  }

  /** Adds `figures` to the stored hour, again from the read when another writer came first. */
  async #add(workspace: string, hour: string, figures: ReadonlyMap<string, UsageFigures>): Promise<void> {
    const key = usageKey(workspace, hour);
    for (;;) {
      const entry = await getJson(this.#options.store, key, validHour);
      const merged: Record<string, UsageFigures> = { ...(entry?.value ?? {}) };
      for (const [name, add] of figures) merged[name] = addUsage(merged[name] ?? NO_USAGE, add);
      if (await putJson(this.#options.store, key, merged, { cas: entry?.modifyIndex ?? 0 })) return;
    }
  }
}

/** The stored hours of a workspace from `since` (an hour, inclusive) on, oldest first. */
export async function usageHours(store: StateStore, workspace: string, since: string): Promise<{ hour: string; figures: UsageHour }[]> {
  const prefix = `${PREFIX}${workspace}/`;
  const entries = await store.list(prefix);
  return entries
    .map((entry) => ({ hour: entry.key.slice(prefix.length), figures: validHour(JSON.parse(entry.value.toString('utf8')), entry.key) }))
    .filter((h) => h.hour >= since)
    .sort((a, b) => a.hour.localeCompare(b.hour));
}

function validHour(value: unknown, key: string): UsageHour {
  const record = storedObject(value, key);
  const hour: Record<string, UsageFigures> = {};
  for (const [name, figures] of Object.entries(record)) {
    hour[name] = usageFrom(storedObject(figures, key));
  }
  return hour;
}
