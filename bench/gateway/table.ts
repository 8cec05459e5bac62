/**
 * The bench's paths, its cells (one per path and load: medians over the
 * rounds, ratios to direct as the median of the per-round ratios) and how
 * they are printed: issue 21's table, then every figure per load.
 */
import type { Panel } from './chart.js';
import { median, ratios, series, type Figures, type Measurement } from './measure.js';

export const PATHS = {
  direct: 'bare uvicorn (httptools, uvloop), TCP',
  nginx: 'nginx, 1 worker → bare uvicorn on a Unix socket',
  haproxy: 'haproxy, 1 thread → the same uvicorn',
  floor: 'Node floor proxy (node:http + undici) → the same uvicorn',
  svc: '`svc server` (gateway: token auth, admission, metrics) + svc runtime',
  'svc-runtime-nginx': "nginx → the svc runtime (the deployed worker's socket)",
  'svc-json': 'JSON endpoint (hello.py) through the svc gateway',
  'svc-json-nginx': "JSON endpoint (hello.py): nginx → its worker's socket",
  'queue-proxy': 'Knative queue-proxy → the direct uvicorn',
  'of-watchdog': 'OpenFaaS of-watchdog (HTTP mode) → the direct uvicorn',
  'floor-runtime': "the floor proxy → the svc runtime (the deployed worker's socket, as `svc`)",
  'direct-chunked': 'bare uvicorn, the answer without Content-Length (chunked)',
  'svc-chunked': '`svc server` + svc runtime, the answer without Content-Length (chunked)',
  'floor-runtime-chunked': 'the floor proxy (collects the answer: one write) → the svc runtime, chunked',
  'floor-runtime-stream-chunked': 'the floor proxy streaming (head at once, pieces as they come) → the svc runtime, chunked',
  'svc-before': '`svc server` of the build in BENCH_BEFORE, the same app (opt-in)',
  'svc-before-chunked': 'the same, the answer without Content-Length (chunked)',
} as const;
export type PathName = keyof typeof PATHS;

/** Paths without a proxy of their own to charge CPU to. */
const NO_PROXY = new Set<string>(['direct', 'direct-chunked']);

/** Answers without a Content-Length (`/chunked` of raw_asgi.py): their own direct path is their ratios' denominator. */
export const isChunked = (name: string): boolean => name.endsWith('-chunked');

/** The direct path a path's ratios are taken to: the same answer, reached without a proxy. */
export const directOf = (name: string): string => (isChunked(name) ? 'direct-chunked' : 'direct');

/** Rounds whose largest figure is more than this much above their smallest disagree: the table shows their range, not one number. */
export const DISAGREE = 0.3;

/** How far apart a figure's rounds are (max ÷ min − 1); 0 for one round. */
export function disagreement(values: readonly number[]): number {
  const min = Math.min(...values);
  const max = Math.max(...values);
  return min > 0 ? max / min - 1 : 0;
}

export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export interface Cell {
  readonly path: string;
  readonly connections: number;
  readonly rps: number;
  readonly rpsVsDirect: Spread;
  readonly p50us: number;
  /** p50 − direct's p50, per round. */
  readonly addedP50us: Spread;
  readonly p99us: number;
  readonly p99VsDirect: Spread;
  /** Summed over the rounds. */
  readonly errors: number;
  readonly proxyCpuUsPerRequest: number | null;
  readonly appCpuUsPerRequest: number | null;
  /** Each round's figures, as measured. */
  readonly rounds: readonly Figures[];
}

export function spreadOf(values: readonly number[]): Spread {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

export function cellsOf(measurement: Measurement, names: readonly string[], loads: readonly number[]): Cell[] {
  return loads.flatMap((connections) =>
    names.map((name) => {
      const pick = (f: (figures: Figures) => number) => series(measurement, name, connections, f);
      const base = directOf(name);
      const direct = series(measurement, base, connections, (f) => f.p50us);
      const appCpu = median(pick((f) => f.appCpuUsPerRequest));
      return {
        path: name,
        connections,
        rps: Math.round(median(pick((f) => f.rps))),
        rpsVsDirect: spreadOf(ratios(measurement, name, base, connections, (f) => f.rps)),
        p50us: median(pick((f) => f.p50us)),
        addedP50us: spreadOf(pick((f) => f.p50us).map((value, index) => value - direct[index]!)),
        p99us: median(pick((f) => f.p99us)),
        p99VsDirect: spreadOf(ratios(measurement, name, base, connections, (f) => f.p99us)),
        errors: pick((f) => f.errors).reduce((sum, n) => sum + n, 0),
        proxyCpuUsPerRequest: NO_PROXY.has(name) ? null : median(pick((f) => f.cpuUsPerRequest)),
        appCpuUsPerRequest: Number.isNaN(appCpu) ? null : appCpu,
        rounds: measurement.rounds.map((round) => round.get(`${name}@${connections}`)!),
      };
    }),
  );
}

/**
 * A figure over the rounds: the median with the rounds' min…max, or, when
 * the rounds disagree by more than DISAGREE, their range alone, marked ⚠
 * (one number would claim more than the run measured). `sign`: a difference
 * (added p50), printed with its sign and never judged for disagreement.
 */
export function formatSpread(spread: Spread, digits: number, sign = false): string {
  const text = (value: number) => `${sign && value >= 0 ? '+' : ''}${value.toFixed(digits)}`;
  if (spread.min === spread.max) return text(spread.median);
  if (!sign && disagreement([spread.min, spread.max]) > DISAGREE) return `${text(spread.min)}…${text(spread.max)} ⚠`;
  return `${text(spread.median)} (${text(spread.min)}…${text(spread.max)})`;
}

/** One figure of a cell over its rounds: the median, or the range marked ⚠ when the rounds disagree (see formatSpread). */
function figure(c: Cell, pick: (figures: Figures) => number, format: (value: number) => string): string {
  const values = c.rounds.map(pick);
  if (values.some(Number.isNaN)) return '–';
  if (disagreement(values) > DISAGREE) return `${format(Math.min(...values))}…${format(Math.max(...values))} ⚠`;
  return format(median(values));
}

const k = (rps: number) => `${(rps / 1000).toFixed(1)}k`;
const fixed = (digits: number) => (value: number) => value.toFixed(digits);
const rps = (f: Figures) => f.rps;
const proxyCpu = (f: Figures) => f.cpuUsPerRequest;
const appCpu = (f: Figures) => f.appCpuUsPerRequest;
const cpuOf = (c: Cell | undefined, pick: (figures: Figures) => number, known: boolean) =>
  c === undefined || !known ? '–' : figure(c, pick, fixed(1));

export function cell(cells: readonly Cell[], path: string, connections: number): Cell | undefined {
  return cells.find((c) => c.path === path && c.connections === connections);
}

export function printTables(cells: readonly Cell[], loads: readonly number[]): void {
  const names = [...new Set(cells.map((c) => c.path))];
  console.log(
    '| path | req/s c=64 | ÷ direct | added p50 at c=1 | p99 at c=16 ÷ direct | proxy CPU µs/req (c=64) | app CPU µs/req (c=64) |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const name of names) {
    const [c1, c16, c64] = [cell(cells, name, 1), cell(cells, name, 16), cell(cells, name, 64)];
    const label = PATHS[name as PathName] ?? name;
    const added = name === directOf(name) || !c1 ? '—' : `${formatSpread(c1.addedP50us, 0, true)} µs`;
    const proxy = cpuOf(c64, proxyCpu, c64?.proxyCpuUsPerRequest != null);
    const app = cpuOf(c64, appCpu, c64?.appCpuUsPerRequest != null);
    console.log(
      `| ${name}: ${label} | ${c64 ? figure(c64, rps, k) : '–'} | ${c64 ? formatSpread(c64.rpsVsDirect, 2) : '–'} | ${added} | ${c16 ? formatSpread(c16.p99VsDirect, 2) : '–'} | ${proxy} | ${app} |`,
    );
  }
  console.log('\nEvery figure, per load:\n');
  console.log('| load | path | req/s | ÷ direct | p50 µs | p99 µs | errors | proxy CPU µs/req | app CPU µs/req |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const connections of loads) {
    for (const name of names) {
      const c = cell(cells, name, connections)!;
      console.log(
        `| c=${connections} | ${name} | ${figure(c, rps, fixed(0))} | ${formatSpread(c.rpsVsDirect, 2)} | ${figure(c, (f) => f.p50us, fixed(0))} | ${figure(c, (f) => f.p99us, fixed(0))} | ${c.errors} | ${cpuOf(c, proxyCpu, c.proxyCpuUsPerRequest !== null)} | ${cpuOf(c, appCpu, c.appCpuUsPerRequest !== null)} |`,
      );
    }
  }
  console.log(
    "\nproxy CPU: the proxy's processes (/proc: user + system; for svc the `svc server` process alone, its containers apart (bench/gateway/svc-server.ts)) over the run ÷ requests answered; app CPU: the same for the app's server (uvicorn, or the svc container). Chunked paths' ratios are to direct-chunked.",
  );
  console.log(
    `⚠: the rounds disagree by more than ${DISAGREE * 100}% (largest ÷ smallest − 1): their range stands in for one number; rerun on a quieter machine or with more rounds (BENCH_ROUNDS).`,
  );
}

/** The chart: req/s at c=64 of every path, proxy CPU per request at c=64 of every proxy. */
export function chartPanels(cells: readonly Cell[]): Panel[] {
  const at64 = cells.filter((c) => c.connections === 64);
  const ours = (name: string) => name.includes('svc'); // svc's gateway or runtime on the path
  return [
    {
      title: 'Throughput at 64 connections (wrk, keep-alive; median of rounds; orange: svc on the path)',
      unit: 'req/s',
      bars: at64.map((c) => ({ label: c.path, value: c.rps, ours: ours(c.path) })),
    },
    {
      title: 'Proxy CPU per request at 64 connections (user + system)',
      unit: 'µs',
      bars: at64
        .filter((c) => c.proxyCpuUsPerRequest !== null)
        .map((c) => ({ label: c.path, value: c.proxyCpuUsPerRequest!, ours: ours(c.path) })),
    },
  ];
}
