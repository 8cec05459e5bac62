/**
 * What svc's allocations use, from Nomad's allocation stats (`GET /v1/client/allocation/:id/stats`), for
 * `svc usage` and `svc container list` on Nomad. Nomad reports CPU as a rate (the percent of one core over
 * its last collection interval), not as a counter, so the CPU seconds here are an estimate: the rate
 * integrated over time. Nomad's rate is over its own last collection interval (1 s by default), so an
 * allocation that is busy is sampled every second, as often as Nomad measures it; an idle one every 2 s. A
 * load that starts between two readings of an idle allocation is counted by the mean of the two rates: off
 * by at most half that interval of one core's time (1 s) for each time an allocation turns busy.
 * Memory is what Nomad measured (the cgroup's usage where the driver has one, else the resident set).
 */
import type { ContainerUsage } from '../types.js';
import type { NomadClient } from './client.js';

interface AllocStats {
  readonly ResourceUsage?: {
    readonly CpuStats?: { readonly Percent?: number };
    readonly MemoryStats?: { readonly RSS?: number; readonly Usage?: number; readonly Measured?: readonly string[] | null };
  };
  /** Each task's own stats: none at all while the client collects none. */
  readonly Tasks?: Readonly<Record<string, unknown>> | null;
}

interface Tracked {
  cpuSeconds: number;
  memoryBytes: number;
  /** The rate and time of the last sample (ms), to integrate the next interval by its mean. */
  percent: number;
  at: number;
  /** When its last sample was asked for: the next is due from then. */
  askedAt: number;
  /** When it was first sampled; whether `onUnmeasured` was told of it. */
  readonly since: number;
  told: boolean;
}

/** How often the driver offers its allocations to `sample`: a busy allocation is read at each offer. */
export const USAGE_SAMPLE_MS = 1_000;

/**
 * An idle allocation is read this often: one request each (50 a second for 100 idle allocations, each a
 * fraction of a millisecond of Nomad's), for a count off by at most 1 s of a core each time a load starts.
 */
export const IDLE_SAMPLE_MS = 2_000;

/** Above this percent of one core an allocation counts as busy. */
const BUSY_PERCENT = 1;

/**
 * An allocation whose answers still have no task's stats this long after its first sample is one its client
 * does not measure: Nomad collects task stats only where the client publishes allocation metrics.
 */
export const UNMEASURED_AFTER_MS = 15_000;

export class AllocationUsage {
  readonly #tracked = new Map<string, Tracked>();
  /** The allocations asked about and not answered yet. */
  readonly #asking = new Set<string>();
  /** The allocations of the last `sample`: an answer for one no longer listed is dropped. */
  #listed = new Set<string>();
  readonly #client: NomadClient;
  readonly #clock: () => number;

  readonly #onUnmeasured: (allocId: string) => void;

  /** `onUnmeasured` is told once of each allocation whose client collects no stats for it. */
  constructor(client: NomadClient, clock: () => number = Date.now, onUnmeasured: (allocId: string) => void = () => {}) {
    this.#client = client;
    this.#clock = clock;
    this.#onUnmeasured = onUnmeasured;
  }

  /**
   * Samples those of `allocIds` that are due (new, busy at their last sample, or idle for `IDLE_SAMPLE_MS`);
   * forgets the allocations no longer listed.
   */
  async sample(allocIds: readonly string[]): Promise<void> {
    this.#listed = new Set(allocIds);
    for (const id of [...this.#tracked.keys()]) if (!this.#listed.has(id)) this.#tracked.delete(id);
    const now = this.#clock();
    // One request per allocation at a time (a slow Nomad never piles them up); due by when it was last asked.
    const due = allocIds.filter((id) => {
      if (this.#asking.has(id)) return false;
      const last = this.#tracked.get(id);
      return last === undefined || last.percent >= BUSY_PERCENT || now - last.askedAt >= IDLE_SAMPLE_MS;
    });
    await Promise.all(
      due.map(async (id) => {
        this.#asking.add(id);
        const askedAt = this.#clock();
        let stats: AllocStats;
        try {
          stats = (await this.#client.get<AllocStats>(`/v1/client/allocation/${encodeURIComponent(id)}/stats`)).body;
        } catch {
          return; // stopping, or its node is away: the next sample tries again
        } finally {
          this.#asking.delete(id);
        }
        if (this.#listed.has(id)) this.#add(id, stats, askedAt); // an allocation dropped meanwhile stays dropped
      }),
    );
  }

  #add(id: string, stats: AllocStats, askedAt: number): void {
    const now = this.#clock();
    const usage = stats.ResourceUsage;
    const percent = Math.max(0, usage?.CpuStats?.Percent ?? 0);
    const memory = usage?.MemoryStats;
    const memoryBytes = (memory?.Measured?.includes('Usage') ? memory.Usage : memory?.RSS) ?? 0;
    const before = this.#tracked.get(id);
    if (before === undefined) {
      this.#tracked.set(id, { cpuSeconds: 0, memoryBytes, percent, at: now, askedAt, since: now, told: false });
      return;
    }
    if (!before.told && Object.keys(stats.Tasks ?? {}).length === 0 && now - before.since >= UNMEASURED_AFTER_MS) {
      before.told = true;
      this.#onUnmeasured(id);
    }
    // The mean of the two rates over the interval: a load that starts or stops between samples counts half.
    before.cpuSeconds += ((before.percent + percent) / 2 / 100) * ((now - before.at) / 1000);
    before.memoryBytes = memoryBytes;
    before.percent = percent;
    before.at = now;
    before.askedAt = askedAt;
  }

  /** What the allocations among `allocIds` used so far, as far as sampled. */
  of(allocIds: readonly string[]): Map<string, ContainerUsage> {
    const found = new Map<string, ContainerUsage>();
    for (const id of allocIds) {
      const tracked = this.#tracked.get(id);
      if (tracked !== undefined) found.set(id, { cpuSeconds: tracked.cpuSeconds, memoryBytes: tracked.memoryBytes });
    }
    return found;
  }
}
