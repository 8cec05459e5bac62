/**
 * Side-by-side measurement of several paths to the same endpoint: every
 * path at every load once per round, the order rotated each round, so that
 * the machine's drift (this one is shared) falls on all paths alike. Ratios
 * are taken within a round, then summarised across rounds.
 */
import { selfCpu } from './cpu.js';
import type { Generator, RunFigures } from './wrk.js';

export interface Path {
  readonly name: string;
  readonly url: string;
  readonly headers?: Record<string, string>;
  /** CPU (µs) used so far by the proxy on this path (cpu.ts); this process's own when not given. */
  readonly proxyCpu?: () => number;
  /** CPU (µs) used so far by the app's server on this path (uvicorn, or the svc runtime's worker). */
  readonly appCpu?: () => number;
}

export interface Figures extends RunFigures {
  /**
   * CPU time the proxy spent per request while the path was driven (user + system, µs):
   * its own cost, which the machine's noise barely touches.
   */
  readonly cpuUsPerRequest: number;
  /** The same for the app's server (NaN when the path has no probe for it). */
  readonly appCpuUsPerRequest: number;
}

export interface Measurement {
  /** Figures of each round, by `path@connections`. */
  readonly rounds: readonly Map<string, Figures>[];
}

export async function measure(
  generator: Generator,
  paths: readonly Path[],
  loads: readonly number[],
  rounds: number,
  durationMs: number,
  warmupMs: number,
): Promise<Measurement> {
  for (const connections of loads) for (const { url, headers } of paths) await generator.drive(url, connections, warmupMs, 0, headers);
  const results: Map<string, Figures>[] = [];
  for (let round = 0; round < rounds; round++) {
    const figures = new Map<string, Figures>();
    const order = [...paths.slice(round % paths.length), ...paths.slice(0, round % paths.length)];
    for (const connections of loads) {
      for (const { name, url, headers, proxyCpu = selfCpu, appCpu } of order) {
        const [proxyBefore, appBefore] = [proxyCpu(), appCpu?.() ?? NaN];
        const run = await generator.drive(url, connections, durationMs, 0, headers);
        const requests = Math.max(1, run.requests);
        figures.set(`${name}@${connections}`, {
          ...run,
          cpuUsPerRequest: (proxyCpu() - proxyBefore) / requests,
          appCpuUsPerRequest: ((appCpu?.() ?? NaN) - appBefore) / requests,
        });
      }
    }
    results.push(figures);
  }
  return { rounds: results };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** One figure of a path at a load, per round. */
export function series(measurement: Measurement, path: string, connections: number, pick: (figures: Figures) => number): number[] {
  return measurement.rounds.map((round) => pick(round.get(`${path}@${connections}`)!));
}

/** `a / b` of a figure within each round. */
export function ratios(measurement: Measurement, a: string, b: string, connections: number, pick: (figures: Figures) => number): number[] {
  const top = series(measurement, a, connections, pick);
  const bottom = series(measurement, b, connections, pick);
  return top.map((value, index) => value / bottom[index]!);
}

/** `median (min–max)`, or the value alone for one round. */
export function spread(values: readonly number[], digits: number): string {
  const text = (value: number) => value.toFixed(digits);
  if (values.length === 1) return text(values[0]!);
  return `${text(median(values))} (${text(Math.min(...values))}–${text(Math.max(...values))})`;
}
