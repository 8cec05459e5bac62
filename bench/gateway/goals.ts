/**
 * Issue 21's goals, judged on one run: each a value (the median of the
 * per-round figures, so both sides of a ratio come from the same round), its
 * bound, and whether it is met. A goal whose paths were not run is "not
 * measured".
 */
import type { ColdStart, DeployTiming, RemoteTiming } from '../lifecycle.js';
import { median, ratios, series, type Figures, type Measurement } from './measure.js';

export interface Goal {
  readonly name: string;
  readonly value: number | null;
  readonly goal: string;
  readonly met: boolean | null;
  /** How the value was read (and its per-round range). */
  readonly detail: string;
}

type Pick = (figures: Figures) => number;
const rps: Pick = (f) => f.rps;
const cpu: Pick = (f) => f.cpuUsPerRequest;

function judged(name: string, value: number | null, bound: number, atMost: boolean, unit: string, detail: string): Goal {
  const goal = `${atMost ? '≤' : '≥'} ${bound}${unit}`;
  if (value === null || Number.isNaN(value)) return { name, value: null, goal, met: null, detail: 'not measured' };
  const rounded = Number(value.toFixed(unit ? 0 : 2));
  return { name, value: rounded, goal, met: atMost ? value <= bound : value >= bound, detail };
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
    return judged(
      name,
      median(values),
      bound,
      atMost,
      '',
      `${what}; ${range(values, 2)}${a === 'svc' ? floorBeside(b, connections, pick) : ''}`,
    );
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
    ratio('svc p99 ÷ direct p99, c=16', 'svc', 'direct', 16, (f) => f.p99us, 2.0, true, 'p99'),
    ratio('svc runtime behind nginx ÷ uvicorn behind nginx, c=64', 'svc-runtime-nginx', 'nginx', 64, rps, 0.9, false, 'req/s'),
  );
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

export function printGoals(goals: readonly Goal[]): void {
  console.log('Goals (issue 21), this run:\n');
  console.log('| goal | value | bound | met | how |');
  console.log('|---|---|---|---|---|');
  for (const goal of goals) {
    const met = goal.met === null ? 'not measured' : goal.met ? 'met' : '**not met**';
    console.log(`| ${goal.name} | ${goal.value ?? '–'} | ${goal.goal} | ${met} | ${goal.detail} |`);
  }
}
