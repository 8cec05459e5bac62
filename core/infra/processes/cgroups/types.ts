/** What a container's cgroup holds it to: the workload's `cpu` (cores) and `memory` (MiB). */
export interface CgroupLimits {
  readonly cpu: number;
  readonly memoryMiB: number;
}

/**
 * A cgroup's folder for each controller: on v2, and for co-mounted v1
 * controllers, the same folder; `cpuacct` null on a v1 machine without it.
 */
export interface CgroupDirs {
  readonly cpu: string;
  readonly memory: string;
  readonly cpuacct: string | null;
}

/** The files of one cgroup version: limits, counters, and how a folder hands controllers down. */
export interface CgroupFiles {
  readonly version: 1 | 2;
  /** After a folder of svc's (not a container's) is made: v2 enables cpu and memory for its children. */
  delegate(dir: string): void;
  /** Writes the limits into a new container cgroup. */
  limit(dirs: CgroupDirs, limits: CgroupLimits): void;
  /** How many processes the kernel killed in it for memory so far. */
  memoryKills(dirs: CgroupDirs): number;
  /** CPU time its processes used so far, in microseconds; null when nothing accounts it. */
  cpuUsageMicros(dirs: CgroupDirs): number | null;
  /** Memory its processes hold now, in bytes (page cache included, as the limit counts it). */
  memoryBytesNow(dirs: CgroupDirs): number;
}

/**
 * Whether containers get their limits here, and why not. `chosen`: the
 * operator chose a way of running that does not enforce them (Nomad's
 * raw_exec), so every deploy says so, not only one that sets cpu or memory.
 */
export type Enforcement = { readonly enforced: true } | { readonly enforced: false; readonly why: string; readonly chosen?: boolean };

/** The CFS period svc uses: the quota is `cpu` × this. 100 ms is the kernel's default. */
export const CPU_PERIOD_MICROS = 100_000;

export function cpuQuotaMicros(cpu: number): number {
  // The kernel refuses quotas under 1 ms; svc's smallest cpu (0.125) is 12.5 ms.
  return Math.max(1000, Math.round(cpu * CPU_PERIOD_MICROS));
}

export function memoryBytes(memoryMiB: number): number {
  return memoryMiB * 1024 * 1024;
}
