/**
 * The last hour of each workload, in this process's memory, for the
 * dashboard's charts: per-minute buckets of requests by status class, a small
 * latency histogram (p50 and p99), containers running and starting and the
 * queue depth (sampled every second, the most in the minute), and cold starts.
 *
 * Minutes, not 10 s: an hour is 60 points, about what a chart a page wide
 * shows apart, and a workload holds 24 KB (10 s buckets would hold six
 * times that, for detail no chart of an hour shows). The request path only
 * adds to arrays made once: the current bucket comes from a coarse clock
 * that `advance()` moves (a timer, once a second), never from a Date.
 */

export const BUCKET_MS = 60_000;
/** Buckets kept: the current minute and the 59 before it. */
export const BUCKETS = 60;

/** Status classes counted: 1xx and 2xx as 2xx (a 101 is a success), 499 (the client left) as 4xx. */
export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

/**
 * Latency bins: 4 per doubling from 0.1 ms, so a bin's bounds are 2^¼ (1.19×)
 * apart and its geometric middle is within 9% of anything in it, up to
 * 0.1 ms × 2^20 (105 s); bin 0 holds what is faster, the last what is slower.
 */
const LATENCY_FLOOR_S = 0.0001;
const BINS_PER_DOUBLING = 4;
const LATENCY_BINS = 20 * BINS_PER_DOUBLING + 2;

/** One workload's hour, as the charts read it: one value per minute, oldest first; null where nothing was known. */
export interface HourReading {
  /** Minutes before now of each bucket (59 … 0); the last one is the current, partial minute. */
  readonly minutesAgo: readonly number[];
  /** Seconds each bucket covers: 60, and for the current one the seconds gone by (at least 1). */
  readonly seconds: readonly number[];
  readonly requests: Readonly<Record<StatusClass, readonly (number | null)[]>>;
  /** Seconds; null in a minute without requests. */
  readonly p50: readonly (number | null)[];
  readonly p99: readonly (number | null)[];
  readonly running: readonly (number | null)[];
  readonly starting: readonly (number | null)[];
  readonly queued: readonly (number | null)[];
  readonly coldStarts: readonly (number | null)[];
}

/** One unit's state at a sample; several units of one workload (a deploy rolling over) add up. */
export interface HourSample {
  readonly key: string;
  readonly running: number;
  readonly starting: number;
  readonly queued: number;
}

/** Which bucket is current: shared by every workload, moved by `advance()`. */
interface Clock {
  minute: number;
  slot: number;
}

/** The key of a workload's hour: its workspace, app, stage and name. */
export function hourKey(ref: { readonly workspace: string; readonly app: string; readonly stage: string }, workload: string): string {
  return `${ref.workspace}\u0000${ref.app}\u0000${ref.stage}\u0000${workload}`;
}

/** The series of one workload. Its arrays are made once; a bucket is zeroed when its minute comes round again. */
export class WorkloadHour {
  readonly #clock: Clock;
  /** The minute each slot holds; -1: none yet (before the workload was first seen). */
  readonly #minutes = new Float64Array(BUCKETS).fill(-1);
  readonly #requests = new Float64Array(BUCKETS * STATUS_CLASSES.length);
  readonly #latency = new Uint32Array(BUCKETS * LATENCY_BINS);
  /** Samples: NaN until the first one of the minute. */
  readonly #running = new Float64Array(BUCKETS);
  readonly #starting = new Float64Array(BUCKETS);
  readonly #queued = new Float64Array(BUCKETS);
  readonly #coldStarts = new Float64Array(BUCKETS);

  constructor(clock: Clock) {
    this.#clock = clock;
    this.open(clock.minute);
  }

  /** An answer: its status and seconds. The request path's only call: array additions, one log. */
  answered(status: number, seconds: number): void {
    const slot = this.#clock.slot;
    const group = status < 300 ? 0 : status < 400 ? 1 : status < 500 ? 2 : 3;
    this.#requests[slot * STATUS_CLASSES.length + group]!++;
    this.#latency[slot * LATENCY_BINS + latencyBin(seconds)]!++;
  }

  coldStart(): void {
    this.#coldStarts[this.#clock.slot]!++;
  }

  sample(running: number, starting: number, queued: number): void {
    const slot = this.#clock.slot;
    // NaN (no sample yet) is never >= a number: the first sample of the minute always lands.
    if (!(this.#running[slot]! >= running)) this.#running[slot] = running;
    if (!(this.#starting[slot]! >= starting)) this.#starting[slot] = starting;
    if (!(this.#queued[slot]! >= queued)) this.#queued[slot] = queued;
  }

  /** Makes `minute`'s slot hold that minute, empty (the minute an hour before it leaves). */
  open(minute: number): void {
    const slot = minute % BUCKETS;
    this.#minutes[slot] = minute;
    this.#requests.fill(0, slot * STATUS_CLASSES.length, (slot + 1) * STATUS_CLASSES.length);
    this.#latency.fill(0, slot * LATENCY_BINS, (slot + 1) * LATENCY_BINS);
    this.#running[slot] = Number.NaN;
    this.#starting[slot] = Number.NaN;
    this.#queued[slot] = Number.NaN;
    this.#coldStarts[slot] = 0;
  }

  /** The hour up to the clock's minute; `elapsedMs` of it gone by. */
  read(elapsedMs: number): HourReading {
    const minute = this.#clock.minute;
    const slots = Array.from({ length: BUCKETS }, (_, i) => {
      const at = minute - (BUCKETS - 1) + i;
      const slot = ((at % BUCKETS) + BUCKETS) % BUCKETS;
      return this.#minutes[slot] === at ? slot : null;
    });
    const each = (value: (slot: number) => number | null) => slots.map((slot) => (slot === null ? null : value(slot)));
    const sampled = (values: Float64Array) => each((slot) => (Number.isNaN(values[slot]!) ? null : values[slot]!));
    const requests = Object.fromEntries(
      STATUS_CLASSES.map((name, group) => [name, each((slot) => this.#requests[slot * STATUS_CLASSES.length + group]!)]),
    ) as Record<StatusClass, (number | null)[]>;
    return {
      minutesAgo: slots.map((_, i) => BUCKETS - 1 - i),
      seconds: slots.map((_, i) => (i === BUCKETS - 1 ? Math.min(60, Math.max(1, elapsedMs / 1000)) : BUCKET_MS / 1000)),
      requests,
      p50: each((slot) => this.#quantile(slot, 0.5)),
      p99: each((slot) => this.#quantile(slot, 0.99)),
      running: sampled(this.#running),
      starting: sampled(this.#starting),
      queued: sampled(this.#queued),
      coldStarts: each((slot) => this.#coldStarts[slot]!),
    };
  }

  /** The `q` quantile of a bucket's latencies, as the middle of the bin it falls in; null without any. */
  #quantile(slot: number, q: number): number | null {
    const start = slot * LATENCY_BINS;
    let total = 0;
    for (let bin = 0; bin < LATENCY_BINS; bin++) total += this.#latency[start + bin]!;
    if (total === 0) return null;
    const rank = Math.max(1, Math.ceil(q * total));
    let seen = 0;
    for (let bin = 0; bin < LATENCY_BINS; bin++) {
      seen += this.#latency[start + bin]!;
      if (seen >= rank) return binMiddle(bin);
    }
    return binMiddle(LATENCY_BINS - 1);
  }
}

function latencyBin(seconds: number): number {
  if (!(seconds > LATENCY_FLOOR_S)) return 0;
  const bin = Math.ceil(Math.log2(seconds / LATENCY_FLOOR_S) * BINS_PER_DOUBLING);
  return Math.min(bin, LATENCY_BINS - 1);
}

/** Bin b (1 … last-1) holds (floor·2^((b-1)/4), floor·2^(b/4)]: its geometric middle. The two open bins: their one bound. */
function binMiddle(bin: number): number {
  if (bin === 0) return LATENCY_FLOOR_S;
  if (bin === LATENCY_BINS - 1) return LATENCY_FLOOR_S * 2 ** ((bin - 1) / BINS_PER_DOUBLING);
  return LATENCY_FLOOR_S * 2 ** ((bin - 0.5) / BINS_PER_DOUBLING);
}

/** Every workload's last hour; one per platform. */
export class LastHour {
  readonly #clock: Clock;
  readonly #workloads = new Map<string, WorkloadHour>();

  constructor(now = Date.now()) {
    const minute = Math.floor(now / BUCKET_MS);
    this.#clock = { minute, slot: minute % BUCKETS };
  }

  /** Moves the clock to `now` (never back): each minute that began opens its bucket in every workload. */
  advance(now: number): void {
    const minute = Math.floor(now / BUCKET_MS);
    if (minute <= this.#clock.minute) return;
    // After a pause longer than the hour, every bucket opens once.
    for (let next = Math.max(this.#clock.minute + 1, minute - BUCKETS + 1); next <= minute; next++) {
      for (const workload of this.#workloads.values()) workload.open(next);
    }
    this.#clock.minute = minute;
    this.#clock.slot = minute % BUCKETS;
  }

  /** The workload's series, made on first use: the request path keeps it (per unit), so this runs once per unit. */
  workload(key: string): WorkloadHour {
    let hour = this.#workloads.get(key);
    if (hour === undefined) this.#workloads.set(key, (hour = new WorkloadHour(this.#clock)));
    return hour;
  }

  coldStart(key: string): void {
    this.workload(key).coldStart();
  }

  /** The served units now; the workloads of none of them are forgotten (deleted, or no longer served). */
  sample(samples: Iterable<HourSample>): void {
    const sums = new Map<string, { running: number; starting: number; queued: number }>();
    for (const { key, running, starting, queued } of samples) {
      const sum = sums.get(key);
      if (sum === undefined) sums.set(key, { running, starting, queued });
      else {
        sum.running += running;
        sum.starting += starting;
        sum.queued += queued;
      }
    }
    for (const key of this.#workloads.keys()) if (!sums.has(key)) this.#workloads.delete(key);
    for (const [key, sum] of sums) this.workload(key).sample(sum.running, sum.starting, sum.queued);
  }

  /** A workload's hour up to `now`; null when this process has nothing of it. */
  read(key: string, now = Date.now()): HourReading | null {
    this.advance(now);
    return this.#workloads.get(key)?.read(now - this.#clock.minute * BUCKET_MS) ?? null;
  }

  /** Workloads held (each a fixed 24 KB). */
  get size(): number {
    return this.#workloads.size;
  }
}
