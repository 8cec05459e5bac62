/**
 * Issue 21's goals, judged on one run: each a value (the median of the
 * per-round figures, so both sides of a ratio come from the same round), its
 * bound, and whether it is met. A goal whose paths were not run is "not
 * measured".
 */
import type { ColdStart, DeployTiming, RemoteTiming } from '../lifecycle.js';
import { median, ratios, series, type Figures, type Measurement } from './measure.js';
import { DISAGREE, disagreement } from './table.js';

export interface Goal {
  readonly name: string;
  /** The median of the rounds (null: not measured). */
  readonly value: number | null;
  readonly goal: string;
  /** null: not measured, or the rounds disagree (`unsettled`) and fall on both sides of the bound. */
  readonly met: boolean | null;
  /** The rounds' min and max, when they disagree by more than DISAGREE: `value` is then no figure to quote; this range is. */
  readonly unsettled?: readonly [number, number];
  /** How the value was read (and its per-round range). */
  readonly detail: string;
}

type Pick = (figures: Figures) => number;
const rps: Pick = (f) => f.rps;
const cpu: Pick = (f) => f.cpuUsPerRequest;
const p99: Pick = (f) => f.p99us;

function judged(name: string, value: number | null, bound: number, atMost: boolean, unit: string, detail: string): Goal {
  const goal = `${atMost ? '≤' : '≥'} ${bound}${unit}`;
  if (value === null || Number.isNaN(value)) return { name, value: null, goal, met: null, detail: 'not measured' };
  const rounded = Number(value.toFixed(unit ? 0 : 2));
  return { name, value: rounded, goal, met: atMost ? value <= bound : value >= bound, detail };
}

/**
 * A goal judged on its per-round values: met when the median is, unless the
 * rounds disagree by more than DISAGREE: then met only when every round is,
 * not met when none is, and unsettled (met: null) otherwise.
 */
function judgedRounds(name: string, values: readonly number[], bound: number, atMost: boolean, detail: string): Goal {
  const goal = judged(name, median(values), bound, atMost, '', detail);
  if (disagreement(values) <= DISAGREE) return goal;
  const meets = values.map((value) => (atMost ? value <= bound : value >= bound));
  const met = meets.every(Boolean) ? true : meets.some(Boolean) ? null : false;
  return { ...goal, met, unsettled: [Math.min(...values), Math.max(...values)] };
}

function range(values: readonly number[], digits: number, unit = ''): string {
  return values.length > 1 ? `rounds ${Math.min(...values).toFixed(digits)}…${Math.max(...values).toFixed(digits)}${unit}` : 'one round';
}

export function evaluateGoals(
  measurement: Measurement,
  names: readonly string[],
  lifecycle: { cold: ColdStart; deploy: DeployTiming; remote: RemoteTiming } | null,
): Goal[] {
  const has = (...wanted: string[]) => wanted.every((name) => names.includes(name));
  const ratio = (
    name: string,
    a: string,
    b: string,
    connections: number,
    pick: Pick,
    bound: number,
    atMost: boolean,
    what: string,
  ): Goal => {
    if (!has(a, b)) return judged(name, null, bound, atMost, '', '');
    const values = ratios(measurement, a, b, connections, pick);
    return judgedRounds(name, values, bound, atMost, `${what}; ${range(values, 2)}${a === 'svc' ? floorBeside(b, connections, pick) : ''}`);
  };
  // What no Node proxy beats here: the floor's own ratio in the same rounds, beside the gateway's.
  const floorBeside = (b: string, connections: number, pick: Pick) =>
    has('floor') && b !== 'floor'
      ? `; the floor (node:http + undici, nothing else): ${median(ratios(measurement, 'floor', b, connections, pick)).toFixed(2)}`
      : '';
  const goals: Goal[] = [
    ratio("svc gateway CPU per request ÷ nginx's, c=64", 'svc', 'nginx', 64, cpu, 2.0, true, 'proxy CPU µs/request'),
    ratio('svc throughput ÷ direct, c=64', 'svc', 'direct', 64, rps, 0.6, false, 'req/s'),
  ];
  if (has('svc', 'direct')) {
    const direct = series(measurement, 'direct', 1, (f) => f.p50us);
    const added = series(measurement, 'svc', 1, (f) => f.p50us).map((value, index) => value - direct[index]!);
    const floorAdded = has('floor') ? series(measurement, 'floor', 1, (f) => f.p50us).map((value, index) => value - direct[index]!) : null;
    goals.push(
      judged(
        'svc added p50 at c=1 (svc p50 − direct p50)',
        median(added),
        100,
        true,
        ' µs',
        `${range(added, 0, ' µs')}${floorAdded ? `; the floor: +${median(floorAdded).toFixed(0)} µs` : ''}`,
      ),
    );
  } else {
    goals.push(judged('svc added p50 at c=1 (svc p50 − direct p50)', null, 100, true, ' µs', ''));
  }
  goals.push(
    ratio('svc p99 ÷ direct p99, c=16', 'svc', 'direct', 16, p99, 2.0, true, 'p99'),
    ratio('svc runtime behind nginx ÷ uvicorn behind nginx, c=64', 'svc-runtime-nginx', 'nginx', 64, rps, 0.9, false, 'req/s'),
  );
  goals.push(...floorGoals(measurement, has));
  for (const peer of ['queue-proxy', 'of-watchdog']) {
    if (!has(peer)) continue;
    goals.push(
      ratio(`svc throughput ÷ ${peer}'s, c=64`, 'svc', peer, 64, rps, 1.0, false, 'req/s; ahead of the functional peer'),
      ratio(
        `svc gateway CPU per request ÷ ${peer}'s, c=64`,
        'svc',
        peer,
        64,
        cpu,
        1.0,
        true,
        'proxy CPU µs/request; ahead of the functional peer',
      ),
    );
  }
  const { cold, deploy, remote } = lifecycle ?? {};
  goals.push(
    judged(
      'cold start ÷ a bare uvicorn spawn',
      cold ? cold.svc.medianMs / cold.bareUvicorn.medianMs : null,
      1.3,
      true,
      '',
      cold ? `${cold.svc.medianMs} ms vs ${cold.bareUvicorn.medianMs} ms (medians of ${cold.svc.samplesMs.length})` : '',
    ),
    judged(
      'svc deploy of the quickstart after a change, wall',
      deploy ? deploy.wall.medianMs : null,
      750,
      true,
      ' ms',
      deploy ? `median of ${deploy.wall.samplesMs.length}: ${deploy.wall.samplesMs.join(', ')} ms` : '',
    ),
    judged(
      'warm .remote() ÷ one HTTP round trip through the gateway',
      remote ? remote.remote.medianMs / remote.http.medianMs : null,
      2.0,
      true,
      '',
      remote ? `${remote.remote.medianMs} ms vs ${remote.http.medianMs} ms (medians of ${remote.calls})` : '',
    ),
  );
  return goals;
}

/**
 * Issue 30's goals: the gateway against the Node floor proxy in front of the
 * same svc runtime, in the same rounds, on both answers (with a
 * Content-Length, and chunked). Beside each: the ratio to the floor in front
 * of a bare uvicorn (with a Content-Length), or to the streaming floor (chunked).
 */
function floorGoals(measurement: Measurement, has: (...names: string[]) => boolean): Goal[] {
  const goals: Goal[] = [];
  for (const [svc, floor, other, answer] of [
    ['svc', 'floor-runtime', 'floor', 'with Content-Length'],
    ['svc-chunked', 'floor-runtime-chunked', 'floor-runtime-stream-chunked', 'chunked'],
  ] as const) {
    const one = (what: string, connections: number, pick: Pick, bound: number, atMost: boolean): Goal => {
      const name = `${svc} ${what} ÷ the floor's in front of the same runtime, c=${connections} (${answer})`;
      if (!has(svc, floor)) return judged(name, null, bound, atMost, '', '');
      const values = ratios(measurement, svc, floor, connections, pick);
      const beside = has(other) ? `; ÷ ${other}'s: ${median(ratios(measurement, svc, other, connections, pick)).toFixed(2)}` : '';
      return judgedRounds(name, values, bound, atMost, `${range(values, 2)}${beside}`);
    };
    goals.push(one('gateway CPU per request', 64, cpu, 1.15, true), one('throughput', 64, rps, 0.9, false), one('p99', 16, p99, 1.2, true));
  }
  return goals;
}

export function printGoals(goals: readonly Goal[]): void {
  console.log('Goals (issues 21 and 30), this run:\n');
  console.log('| goal | value | bound | met | how |');
  console.log('|---|---|---|---|---|');
  for (const goal of goals) {
    const met =
      goal.value === null
        ? 'not measured'
        : goal.met === null
          ? `**unsettled**: the rounds disagree by more than ${DISAGREE * 100}%`
          : `${goal.met ? 'met' : '**not met**'}${goal.unsettled ? ` (every round; they disagree by more than ${DISAGREE * 100}%)` : ''}`;
    const value = goal.value === null ? '–' : goal.unsettled ? `${unsettledRange(goal.unsettled)} ⚠` : `${goal.value}`;
    console.log(`| ${goal.name} | ${value} | ${goal.goal} | ${met} | ${goal.detail} |`);
  }
}

/** An unsettled goal's figure: the range of its rounds. */
export function unsettledRange([min, max]: readonly [number, number]): string {
  return `${min.toFixed(2)}…${max.toFixed(2)}`;
}

/** This build's svc against BENCH_BEFORE's, on both answers: ratios of the same rounds, with their range. */
export function printBeforeAfter(measurement: Measurement, names: readonly string[], before: string): void {
  console.log(`\nThis build's svc ÷ the svc of ${before} (svc-before), per round:\n`);
  console.log('| answer | gateway CPU per request, c=64 | req/s, c=64 | p99, c=16 |');
  console.log('|---|---|---|---|');
  for (const [after, was, answer] of [
    ['svc', 'svc-before', 'with Content-Length'],
    ['svc-chunked', 'svc-before-chunked', 'chunked'],
  ] as const) {
    if (!names.includes(after) || !names.includes(was)) continue;
    const ratio = (connections: number, pick: Pick) => {
      const values = ratios(measurement, after, was, connections, pick);
      return `${median(values).toFixed(2)} (${range(values, 2)})${disagreement(values) > DISAGREE ? ' ⚠' : ''}`;
    };
    console.log(`| ${answer} | ${ratio(64, cpu)} | ${ratio(64, rps)} | ${ratio(16, p99)} |`);
  }
}
