/**
 * Drives a URL with wrk (a closed-loop HTTP/1.1 keep-alive load generator in
 * C, from Debian's `wrk` package) and reads its figures from report.lua's JSON
 * line. When wrk is not installed, says how to get it and falls back to
 * bench/load.ts (Node, slower: it shares the two cores with what it measures).
 */
import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { packageRoot } from '../../core/model/paths.js';
import type { LoadResult, LoadSpec } from '../load.js';

const run = promisify(execFile);
const REPORT = path.join(packageRoot, 'bench', 'gateway', 'report.lua');
const LOAD = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'load.js');

export interface RunFigures {
  readonly requests: number;
  readonly rps: number;
  readonly p50us: number;
  readonly p99us: number;
  /** Failed connections, reads, writes, timeouts and non-2xx answers. */
  readonly errors: number;
}

export interface Generator {
  readonly name: string;
  /** Runs `connections` keep-alive loops against `url` for `durationMs` (after `warmupMs` not counted), each request with `headers`. */
  drive(url: string, connections: number, durationMs: number, warmupMs: number, headers?: Record<string, string>): Promise<RunFigures>;
}

export function wrkAvailable(): boolean {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (error) {
    // wrk --version prints its usage and exits 1: it is there.
    return (error as { status?: number }).status === 1;
  }
}

/** wrk with one thread: on two cores a second thread would take CPU from what is measured. */
export const wrk: Generator = {
  name: 'wrk',
  async drive(url, connections, durationMs, warmupMs, headers = {}) {
    if (warmupMs > 0) await wrkRun(url, connections, warmupMs, headers);
    return wrkRun(url, connections, durationMs, headers);
  },
};

async function wrkRun(url: string, connections: number, durationMs: number, headers: Record<string, string>): Promise<RunFigures> {
  const seconds = `${Math.max(1, Math.round(durationMs / 1000))}s`;
  const headerArgs = Object.entries(headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
  const { stdout } = await run('wrk', ['-t1', `-c${connections}`, `-d${seconds}`, '--timeout', '5s', ...headerArgs, '-s', REPORT, url], {
    maxBuffer: 1 << 20,
  });
  const line = stdout.split('\n').find((text) => text.startsWith('WRK_JSON '));
  if (!line) throw new Error(`wrk printed no figures:\n${stdout}`);
  const figures = JSON.parse(line.slice('WRK_JSON '.length)) as Record<string, number>;
  const errors = figures.connect! + figures.read! + figures.write! + figures.status! + figures.timeout!;
  return {
    requests: figures.requests!,
    rps: Math.round(figures.requests! / (figures.duration_us! / 1e6)),
    p50us: figures.p50_us!,
    p99us: figures.p99_us!,
    errors,
  };
}

/** bench/load.ts in its own process; also the only generator that reaches a Unix socket. */
export function nodeGenerator(socketPath: string | null = null): Generator {
  return {
    name: 'bench/load.ts',
    async drive(url, connections, durationMs, warmupMs, headers) {
      const spec: LoadSpec = { url, socketPath, connections, durationMs, warmupMs, ...(headers ? { headers } : {}) };
      const { stdout } = await run(process.execPath, [LOAD, JSON.stringify(spec)]);
      const result = JSON.parse(stdout) as LoadResult;
      return { requests: result.requests, rps: result.rps, p50us: result.p50us, p99us: result.p99us, errors: result.errors };
    },
  };
}
