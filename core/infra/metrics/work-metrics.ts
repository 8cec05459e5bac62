/**
 * The series of batch and background work (docs/metrics.md): spawned calls
 * ended by status and their run time, map inputs answered by outcome, and,
 * read at scrape time, each running map's backlog. Labelled by workspace,
 * app and function; never by a call or map id (ids would make a series each).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

const WORK_LABELS = ['workspace', 'app', 'function'] as const;
export type WorkLabels = Readonly<Record<(typeof WORK_LABELS)[number], string>>;

/** A spawned call runs from milliseconds to hours. */
const CALL_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14_400];

/** One running map's inputs now, for the backlog gauges. */
export interface MapBacklog {
  readonly labels: WorkLabels;
  readonly queued: number;
  readonly running: number;
}

export type BacklogReader = () => Iterable<MapBacklog>;

/** The bytes each volume holds, as the volumes service last measured them. */
export type VolumeUsageReader = () => Promise<Iterable<{ readonly workspace: string; readonly volume: string; readonly bytes: number }>>;

export class WorkMetrics {
  readonly #callsEnded: Counter<keyof WorkLabels | 'status'>;
  readonly #callDuration: Histogram<keyof WorkLabels>;
  readonly #mapInputs: Counter<keyof WorkLabels | 'outcome'>;
  readonly #cpuSeconds: Counter<'workspace' | 'app' | 'workload'>;
  readonly #memoryGiBSeconds: Counter<'workspace' | 'app' | 'workload'>;
  #backlog: BacklogReader = () => [];
  #volumes: VolumeUsageReader = async () => [];

  constructor(registry: Registry) {
    const registers = [registry];
    this.#callsEnded = new Counter({
      name: 'svc_calls_ended_total',
      help: 'Spawned calls that ended, by status (succeeded, failed, cancelled).',
      labelNames: [...WORK_LABELS, 'status'],
      registers,
    });
    this.#callDuration = new Histogram({
      name: 'svc_call_duration_seconds',
      help: 'Spawned calls that ran: from the start of their first attempt to their end.',
      labelNames: WORK_LABELS,
      buckets: CALL_BUCKETS,
      registers,
    });
    this.#mapInputs = new Counter({
      name: 'svc_map_inputs_total',
      help: 'Inputs of maps (.map, .starmap, .for_each) answered, by outcome (succeeded, failed); rate() gives inputs per second.',
      labelNames: [...WORK_LABELS, 'outcome'],
      registers,
    });
    this.#cpuSeconds = new Counter({
      name: 'svc_container_cpu_seconds_total',
      help: "CPU seconds the workload's containers used, from their cgroups (svc usage); rate() gives cores in use.",
      labelNames: ['workspace', 'app', 'workload'],
      registers,
    });
    this.#memoryGiBSeconds = new Counter({
      name: 'svc_container_memory_gib_seconds_total',
      help: "Memory the workload's containers held, in GiB, times the seconds they held it, from their cgroups (svc usage).",
      labelNames: ['workspace', 'app', 'workload'],
      registers,
    });
    const read = () => this.#backlog();
    const volumes = () => this.#volumes();
    new Gauge({
      name: 'svc_volume_bytes',
      help: 'Bytes the files of each volume hold (measured at most every 30 s).',
      labelNames: ['workspace', 'volume'],
      registers: [registry],
      async collect() {
        const usage = await volumes();
        this.reset();
        for (const { workspace, volume, bytes } of usage) this.set({ workspace, volume }, bytes);
      },
    });
    backlogGauge(
      registry,
      'svc_map_inputs_queued',
      'Inputs of running maps received and not started yet: the backlog.',
      read,
      (map) => map.queued,
    );
    backlogGauge(registry, 'svc_map_inputs_running', 'Inputs of running maps a container is answering now.', read, (map) => map.running);
  }

  /** Where the volume gauge reads, once the platform has its volumes. */
  readVolumes(reader: VolumeUsageReader): void {
    this.#volumes = reader;
  }

  /** Where the backlog gauges read, once the platform has its maps. */
  readBacklog(reader: BacklogReader): void {
    this.#backlog = reader;
  }

  /** A spawned call ended; `seconds` is null for one that never started (cancelled while queued). */
  callEnded(labels: WorkLabels, status: string, seconds: number | null): void {
    this.#callsEnded.inc({ ...labels, status });
    if (seconds !== null) this.#callDuration.observe({ ...labels }, seconds);
  }

  /** What a workload's containers used since the usage meter's last reading. */
  containerUsage(
    labels: { readonly workspace: string; readonly app: string; readonly workload: string },
    cpuSeconds: number,
    memoryGiBSeconds: number,
  ): void {
    this.#cpuSeconds.inc({ ...labels }, cpuSeconds);
    this.#memoryGiBSeconds.inc({ ...labels }, memoryGiBSeconds);
  }

  mapInput(labels: WorkLabels, outcome: 'succeeded' | 'failed'): void {
    this.#mapInputs.inc({ ...labels, outcome });
  }
}

function backlogGauge(registry: Registry, name: string, help: string, read: BacklogReader, count: (map: MapBacklog) => number): void {
  new Gauge({
    name,
    help,
    labelNames: WORK_LABELS,
    registers: [registry],
    collect() {
      this.reset();
      for (const map of read()) this.inc({ ...map.labels }, count(map));
    },
  });
}
