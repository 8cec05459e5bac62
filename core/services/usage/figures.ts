/** The figures `svc usage` counts for one workload (in one hour, or summed): one shape, added one way. */

export interface UsageFigures {
  readonly cpuSeconds: number;
  /** Memory held (its cgroup's count), in GiB, times the seconds it was held. */
  readonly memoryGiBSeconds: number;
  /** Memory reserved (the workload's `memory=`) by its running containers, in GiB-seconds. */
  readonly memoryReservedGiBSeconds: number;
  /** Requests its URL answered (the gateway's count; a function's calls are not requests). */
  readonly requests: number;
  /** Calls its functions answered (`.remote()`, `.map()`, spawned calls: the runs' count). */
  readonly calls: number;
  /** Bytes those requests moved on their client connections, head and body: in from clients, out to them. */
  readonly bytesIn: number;
  readonly bytesOut: number;
  /** GPUs its containers held, times the seconds they held them. */
  readonly gpuSeconds: number;
}

export const USAGE_FIGURES = [
  'cpuSeconds',
  'memoryGiBSeconds',
  'memoryReservedGiBSeconds',
  'requests',
  'calls',
  'bytesIn',
  'bytesOut',
  'gpuSeconds',
] as const;

export const NO_USAGE: UsageFigures = Object.freeze(Object.fromEntries(USAGE_FIGURES.map((name) => [name, 0])) as unknown as UsageFigures);

export function addUsage(a: UsageFigures, b: Partial<UsageFigures>): UsageFigures {
  return Object.fromEntries(USAGE_FIGURES.map((name) => [name, a[name] + (b[name] ?? 0)])) as unknown as UsageFigures;
}

/** Figures as stored (hours written before a figure existed lack it: 0). */
export function usageFrom(stored: Readonly<Record<string, unknown>>): UsageFigures {
  return Object.fromEntries(USAGE_FIGURES.map((name) => [name, Number(stored[name]) || 0])) as unknown as UsageFigures;
}
