/**
 * What svc's allocations use, from Nomad's allocation stats (`GET /v1/client/allocation/:id/stats`), for
 * `svc usage` and `svc container list` on Nomad. Nomad reports CPU as a rate (the percent of one core over
 * its last collection interval), not as a counter, so the CPU seconds here are an estimate: the rate
 * integrated over time, sampled every `intervalMs` while someone reads them. Memory is what Nomad measured
 * (the cgroup's usage where the driver has one, else the resident set).
 */
import type { ContainerUsage } from '../types.js';
import type { NomadClient } from './client.js';

interface AllocStats {
  readonly ResourceUsage?: {
    readonly CpuStats?: { readonly Percent?: number };
    readonly MemoryStats?: { readonly RSS?: number; readonly Usage?: number; readonly Measured?: readonly string[] | null };
  };
}

interface Tracked {
  cpuSeconds: number;
  memoryBytes: number;
  /** The rate and time of the last sample (ms), to integrate the next interval by its mean. */
  percent: number;
  at: number;
}

/**
 * Between two samples: each is one request per allocation (20 a second for 100 allocations), and a load
 * shorter than this is seen by half (the mean of the rates at either end).
 */
export const USAGE_SAMPLE_MS = 5_000;

export class AllocationUsage {
  readonly #tracked = new Map<string, Tracked>();
  readonly #client: NomadClient;
  readonly #clock: () => number;

  constructor(client: NomadClient, clock: () => number = Date.now) {
    this.#client = client;
    this.#clock = clock;
  }

  /** Samples each of `allocIds` once; forgets the allocations no longer listed. */
  async sample(allocIds: readonly string[]): Promise<void> {
    const wanted = new Set(allocIds);
    for (const id of [...this.#tracked.keys()]) if (!wanted.has(id)) this.#tracked.delete(id);
    await Promise.all(
      allocIds.map(async (id) => {
        let stats: AllocStats;
        try {
          stats = (await this.#client.get<AllocStats>(`/v1/client/allocation/${encodeURIComponent(id)}/stats`)).body;
        } catch {
          return; // stopping, or its node is away: the next sample tries again
        }
        this.#add(id, stats);
      }),
    );
  }

  #add(id: string, stats: AllocStats): void {
    const now = this.#clock();
    const usage = stats.ResourceUsage;
    const percent = Math.max(0, usage?.CpuStats?.Percent ?? 0);
    const memory = usage?.MemoryStats;
    const memoryBytes = (memory?.Measured?.includes('Usage') ? memory.Usage : memory?.RSS) ?? 0;
    const before = this.#tracked.get(id);
    if (before === undefined) {
      this.#tracked.set(id, { cpuSeconds: 0, memoryBytes, percent, at: now });
      return;
    }
    // The mean of the two rates over the interval: a load that starts or stops between samples counts half.
    before.cpuSeconds += ((before.percent + percent) / 2 / 100) * ((now - before.at) / 1000);
    before.memoryBytes = memoryBytes;
    before.percent = percent;
    before.at = now;
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
