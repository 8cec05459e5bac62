/** The figures `svc usage` counts for one workload (in one hour, or summed): one shape, added one way. */

export interface UsageFigures {
  readonly cpuSeconds: number;
  readonly memoryGiBSeconds: number;
  /** Requests its URL answered (the gateway's count; a function's calls are not requests). */
  readonly requests: number;
}

export const NO_USAGE: UsageFigures = Object.freeze({ cpuSeconds: 0, memoryGiBSeconds: 0, requests: 0 });

export function addUsage(a: UsageFigures, b: UsageFigures): UsageFigures {
  return {
    cpuSeconds: a.cpuSeconds + b.cpuSeconds,
    memoryGiBSeconds: a.memoryGiBSeconds + b.memoryGiBSeconds,
    requests: a.requests + b.requests,
  };
}

/** Figures as stored (hours written before a figure existed lack it: 0). */
export function usageFrom(stored: Readonly<Record<string, unknown>>): UsageFigures {
  return {
    cpuSeconds: Number(stored.cpuSeconds) || 0,
    memoryGiBSeconds: Number(stored.memoryGiBSeconds) || 0,
    requests: Number(stored.requests) || 0,
  };
}
