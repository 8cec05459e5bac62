/**
 * What svc tells Prometheus (`GET /metrics`, docs/metrics.md): per workload,
 * requests by status, gateway and upstream latency, requests in flight and
 * queued, error answers by code (the cause of every 429), containers by
 * state (and those waiting for GPUs), cold starts, scale events; the GPUs (gpu-metrics.ts); for the platform, Node's own metrics
 * (event-loop lag included), state store calls and Consul/Nomad calls.
 *
 * One registry per platform (tests run several in one process), beside the
 * process's own series (processRegistry). The request
 * path only touches children made once per workload (`WorkloadMeter`, on
 * hot-series.ts): additions, no label hashing per request. Gauges of load and
 * containers are read at scrape time. The same meters feed the dashboard's
 * charts of the last hour (last-hour.ts).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { HotCounter, HotHistogram, type CounterChild, type HistogramChild } from './hot-series.js';
import type { DeploymentRef } from '../../model/workload/deployment-ref.js';
import { WorkMetrics } from './work-metrics.js';
import { GpuMetrics } from './gpu-metrics.js';
import { hourKey, LastHour, type WorkloadHour } from './last-hour.js';
import { startLastHourClock } from './last-hour-clock.js';

/**
 * The process's own series (CPU, memory, GC, event-loop lag), named svc_process_*: one set per
 * process, however many platforms it runs, since prom-client's collectors start an event-loop
 * timer and a GC observer that nothing stops (a set per platform left each closed platform's
 * running). scrape() shows them first, as when they shared the platform's registry.
 */
let processSeries: Registry | undefined;

function processRegistry(): Registry {
  if (processSeries === undefined) {
    processSeries = new Registry();
    // The lag's percentiles from a sample every 100 ms: prom-client's 10 ms woke an idle server a
    // hundred times a second (measured: 1.5% of a core idle, 0.45% at 100 ms).
    collectDefaultMetrics({ register: processSeries, prefix: 'svc_process_', eventLoopMonitoringPrecision: 100 });
  }
  return processSeries;
}

/** The labels of every per-workload series. */
const WORKLOAD_LABELS = ['workspace', 'app', 'workload', 'stage'] as const;
type WorkloadLabel = (typeof WORKLOAD_LABELS)[number];
type Labels = Record<WorkloadLabel, string>;

/** Seconds, from a proxied hello (~0.3 ms) to a slow handler. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Cold starts: a worker process forks in ~0.1 s, a Nomad allocation takes seconds. */
const COLD_START_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120];
/** Calls to the state store and the agents: a file write (~1 ms) to a slow Consul. */
const CALL_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/** One unit's load and containers, read at scrape time. */
export interface UnitReading {
  readonly ref: DeploymentRef;
  readonly workload: string;
  readonly inFlight: number;
  readonly queued: number;
  /** Containers by state (`starting`, `healthy`, `stopping`, `exited`). */
  readonly containers: Readonly<Record<string, number>>;
  /** Its containers waiting for GPUs now (starting, embedded default). */
  readonly gpuWaiting: number;
}

/** A unit's answered requests and the bytes they moved, counted since its meter was made. */
export interface UnitTraffic {
  readonly requests: number;
  readonly bytesIn: number;
  readonly bytesOut: number;
}

const NO_TRAFFIC: UnitTraffic = Object.freeze({ requests: 0, bytesIn: 0, bytesOut: 0 });

/** Where the scrape-time gauges come from (the platform's routes, admission and driver). */
export type UnitReader = () => Iterable<UnitReading>;

/** The request path's handle on one workload's series. */
export interface WorkloadMeter {
  /** The answer is done (or the client left: 499): its status, the time since the request arrived, and the bytes it moved each way. */
  answered(status: number, seconds: number, bytesIn: number, bytesOut: number): void;
  /** The container's answer head arrived, `seconds` after the request was sent to it. */
  upstream(seconds: number): void;
  /** The gateway answered an error itself (admission, auth, container failure): its stable code. */
  failed(code: string): void;
}

export class PlatformMetrics {
  readonly registry = new Registry();
  /** Made with the first platform, so that its series count from then on, not from the first scrape. */
  readonly #process = processRegistry();
  /** Spawned calls and maps. */
  readonly work = new WorkMetrics(this.registry);
  /** The machine's GPUs, and what the held ones do. */
  readonly gpus = new GpuMetrics(this.registry);
  /** Each workload's last hour, per minute, for the dashboard's charts. */
  readonly lastHour = new LastHour();
  #lastHourClock: { stop(): void } | null = null;
  readonly #requests: HotCounter;
  readonly #duration: HotHistogram;
  readonly #upstream: HotHistogram;
  readonly #errors: HotCounter;
  readonly #coldStarts: Histogram<WorkloadLabel>;
  readonly #scaleEvents: Counter<WorkloadLabel | 'direction'>;
  readonly #storeCalls: Histogram<'operation' | 'outcome'>;
  readonly #agentCalls: Histogram<'agent' | 'operation' | 'outcome'>;
  readonly #meters = new Map<string, CachedMeter>();
  #units: UnitReader = () => [];

  constructor() {
    const registers = [this.registry];
    this.#requests = new HotCounter(
      'svc_requests_total',
      'Requests to workload URLs, by the status of their answer (499: the client left first).',
      this.registry,
    );
    this.#duration = new HotHistogram(
      'svc_request_duration_seconds',
      'Time from a request reaching the gateway to the end of its answer.',
      LATENCY_BUCKETS,
      this.registry,
    );
    this.#upstream = new HotHistogram(
      'svc_upstream_duration_seconds',
      'Time from sending a request to a container to its answer head.',
      LATENCY_BUCKETS,
      this.registry,
    );
    this.#errors = new HotCounter(
      'svc_gateway_errors_total',
      'Error answers the gateway gave itself, by svc error code (queue_full is the 429 of max_pending_tasks).',
      this.registry,
    );
    this.#coldStarts = new Histogram({
      name: 'svc_cold_start_duration_seconds',
      help: 'Time from starting the first container of a workload that had none to it being healthy.',
      labelNames: WORKLOAD_LABELS,
      buckets: COLD_START_BUCKETS,
      registers,
    });
    this.#scaleEvents = new Counter({
      name: 'svc_scale_events_total',
      help: 'Autoscaler decisions that started (up) or stopped (down) containers.',
      labelNames: [...WORKLOAD_LABELS, 'direction'],
      registers,
    });
    this.#storeCalls = new Histogram({
      name: 'svc_state_store_duration_seconds',
      help: 'Calls to the state store (file store or Consul KV), blocking watches left out.',
      labelNames: ['operation', 'outcome'],
      buckets: CALL_BUCKETS,
      registers,
    });
    this.#agentCalls = new Histogram({
      name: 'svc_agent_call_duration_seconds',
      help: 'Calls to the Consul and Nomad HTTP APIs, blocking queries left out.',
      labelNames: ['agent', 'operation', 'outcome'],
      buckets: CALL_BUCKETS,
      registers,
    });
    registerWorkloadGauges(
      registers,
      gaugeReader(() => this.#units()),
    );
  }

  /** Where the gauges of load and containers read, once the platform has built its routes, admission and driver. */
  readUnits(units: UnitReader): void {
    this.#units = units;
    this.#lastHourClock?.stop();
    this.#lastHourClock = startLastHourClock(this.lastHour, units);
  }

  /** Stops the last hour's clock (the platform closes). */
  close(): void {
    this.#lastHourClock?.stop();
    this.#lastHourClock = null;
  }

  /** The meter of a workload, made once per unit and kept while the unit is served. */
  workload(unit: string, ref: DeploymentRef, workload: string): WorkloadMeter {
    let meter = this.#meters.get(unit);
    if (meter === undefined) {
      const hour = this.lastHour.workload(hourKey(ref, workload));
      meter = new CachedMeter(labelsOf(ref, workload), hour, this.#requests, this.#duration, this.#upstream, this.#errors);
      this.#meters.set(unit, meter);
    }
    return meter;
  }

  /** What a unit's URL answered since its meter was made: requests and bytes each way (counters, for `svc usage`). */
  trafficOf(unit: string): Readonly<UnitTraffic> {
    return this.#meters.get(unit)?.traffic ?? NO_TRAFFIC;
  }

  /** Units no longer served lose their meters (their series stay, with their totals, as Prometheus expects of counters). */
  keepMeters(served: ReadonlySet<string>): void {
    for (const unit of this.#meters.keys()) if (!served.has(unit)) this.#meters.delete(unit);
  }

  coldStart(ref: DeploymentRef, workload: string, seconds: number): void {
    this.#coldStarts.observe(labelsOf(ref, workload), seconds);
    this.lastHour.coldStart(hourKey(ref, workload));
  }

  scaled(ref: DeploymentRef, workload: string, direction: 'up' | 'down', containers: number): void {
    this.#scaleEvents.inc({ ...labelsOf(ref, workload), direction }, containers);
  }

  storeCall(operation: string, seconds: number, ok: boolean): void {
    this.#storeCalls.observe({ operation, outcome: ok ? 'ok' : 'error' }, seconds);
  }

  /** What an agent client tells of its calls. */
  observer(agent: 'consul' | 'nomad'): CallObserver {
    return (operation, seconds, ok) => this.#agentCalls.observe({ agent, operation, outcome: ok ? 'ok' : 'error' }, seconds);
  }

  /** The text format Prometheus scrapes, and its content type. */
  async scrape(): Promise<{ readonly contentType: string; readonly body: string }> {
    const both = Registry.merge([this.#process, this.registry]);
    return { contentType: both.contentType, body: await both.metrics() };
  }
}

/** Told of each non-blocking call an agent client makes: `GET /v1/kv`, its seconds, whether it got an answer svc could use. */
export type CallObserver = (operation: string, seconds: number, ok: boolean) => void;

/** Observes one agent or store call's duration and outcome around `call`. */
export async function timed<T>(call: () => Promise<T>, observe: (seconds: number, ok: boolean) => void): Promise<T> {
  const started = performance.now();
  try {
    const result = await call();
    observe((performance.now() - started) / 1000, true);
    return result;
  } catch (error) {
    observe((performance.now() - started) / 1000, false);
    throw error;
  }
}

/** `GET /v1/job/x/plan` → `GET /v1/job`: the API's first segment, so that ids never become labels. */
export function agentOperation(method: string, path: string): string {
  const [, version, first] = path.split('?')[0]!.split('/');
  return `${method} /${version ?? ''}${first === undefined ? '' : `/${first}`}`;
}

class CachedMeter implements WorkloadMeter {
  readonly #labels: Labels;
  readonly #hour: WorkloadHour;
  readonly #requests: HotCounter;
  readonly #errors: HotCounter;
  readonly #byStatus = new Map<number, CounterChild>();
  readonly #byCode = new Map<string, CounterChild>();
  readonly #duration: HistogramChild;
  readonly #upstream: HistogramChild;
  /** Requests answered (all statuses) and the bytes they moved: counters for `svc usage`. */
  readonly traffic = { requests: 0, bytesIn: 0, bytesOut: 0 };

  constructor(
    labels: Labels,
    hour: WorkloadHour,
    requests: HotCounter,
    duration: HotHistogram,
    upstream: HotHistogram,
    errors: HotCounter,
  ) {
    this.#labels = labels;
    this.#hour = hour;
    this.#requests = requests;
    this.#errors = errors;
    this.#duration = duration.child(labels);
    this.#upstream = upstream.child(labels);
  }

  answered(status: number, seconds: number, bytesIn: number, bytesOut: number): void {
    let counter = this.#byStatus.get(status);
    if (counter === undefined) this.#byStatus.set(status, (counter = this.#requests.child({ ...this.#labels, status: String(status) })));
    counter.inc();
    this.traffic.requests++;
    this.traffic.bytesIn += bytesIn;
    this.traffic.bytesOut += bytesOut;
    this.#duration.observe(seconds);
    this.#hour.answered(status, seconds);
  }

  upstream(seconds: number): void {
    this.#upstream.observe(seconds);
  }

  failed(code: string): void {
    let counter = this.#byCode.get(code);
    if (counter === undefined) this.#byCode.set(code, (counter = this.#errors.child({ ...this.#labels, code })));
    counter.inc();
  }
}

function labelsOf(ref: DeploymentRef, workload: string): Labels {
  return { workspace: ref.workspace, app: ref.app, workload, stage: ref.stage };
}

/** The readings of one scrape, read once however many gauges ask (they are collected one after the other). */
function gaugeReader(units: UnitReader): () => readonly UnitReading[] {
  let cached: { readonly at: number; readonly readings: readonly UnitReading[] } | null = null;
  return () => {
    const now = performance.now();
    if (cached === null || now - cached.at > 100) cached = { at: now, readings: [...units()] };
    return cached.readings;
  };
}

/** The gauges of each workload's load and containers now, read from the units when /metrics is scraped. */
function registerWorkloadGauges(registers: Registry[], readings: ReturnType<typeof gaugeReader>): void {
  new Gauge({
    name: 'svc_requests_in_flight',
    help: 'Requests holding a slot on a container now.',
    labelNames: WORKLOAD_LABELS,
    registers,
    collect() {
      this.reset();
      for (const unit of readings()) this.inc(labelsOf(unit.ref, unit.workload), unit.inFlight);
    },
  });
  new Gauge({
    name: 'svc_requests_queued',
    help: 'Requests waiting for a slot now.',
    labelNames: WORKLOAD_LABELS,
    registers,
    collect() {
      this.reset();
      for (const unit of readings()) this.inc(labelsOf(unit.ref, unit.workload), unit.queued);
    },
  });
  new Gauge({
    name: 'svc_containers',
    help: 'Containers of each workload by state.',
    labelNames: [...WORKLOAD_LABELS, 'state'],
    registers,
    collect() {
      this.reset();
      for (const unit of readings()) {
        const labels = labelsOf(unit.ref, unit.workload);
        for (const [state, count] of Object.entries(unit.containers)) this.inc({ ...labels, state }, count);
      }
    },
  });
  new Gauge({
    name: 'svc_gpu_waiting_containers',
    help: 'Containers of each workload starting that wait for GPUs others hold (embedded default): its requests wait in its queue.',
    labelNames: WORKLOAD_LABELS,
    registers,
    collect() {
      this.reset();
      for (const unit of readings()) if (unit.gpuWaiting > 0) this.inc(labelsOf(unit.ref, unit.workload), unit.gpuWaiting);
    },
  });
}
