/**
 * What the Nomad driver's operations share (driver.ts): the client, the settings with their
 * defaults, and the units it tracks, each with its allocation watcher and log poller.
 */
import { SvcError } from '../../../model/errors.js';
import { nomadJobId } from '../../../model/nomad-job-id.js';
import type { DeploymentUnit, LogLine } from '../types.js';
import { NomadClient } from './client.js';
import { Limiter, LogPoller } from './log-poller.js';
import type { NomadDriverOptions } from './options.js';
import type { Requested } from './requested.js';
import type { NomadJobSpec } from './types.js';
import { AllocationWatcher, type AllocView } from './watcher.js';

export interface Unit {
  readonly key: string;
  readonly jobId: string;
  group: string;
  task: string;
  readonly watcher: AllocationWatcher;
  logs: LogPoller | undefined;
  /** The count of the scale in progress (the latest call's), until it settles. */
  requested: Requested | undefined;
  /** What this driver last submitted for the key (unknown for a job read back after a restart). */
  submitted: DeploymentUnit | undefined;
}

/** Log reads in flight at once, over all units. */
const LOG_READS_AT_ONCE = 8;

export const jobPath = (id: string) => `/v1/job/${encodeURIComponent(id)}`;

/** The unit's allocations as its watcher last saw them. */
export function views(unit: Unit): AllocView[] {
  return [...unit.watcher.allocs.values()];
}

export class NomadDriverState {
  readonly client: NomadClient;
  readonly units = new Map<string, Unit>();
  /** Job IDs of submits in progress (not yet in `units`). */
  readonly submitting = new Set<string>();
  /** Host volume registrations under way (`<name>@<node id>`): units of one deploy share one (host-volumes.ts). */
  readonly hostVolumes = new Map<string, Promise<void>>();
  readonly healthTimeoutMs: number;
  readonly stopTimeoutMs: number;
  private readonly healthPath: string;
  private readonly blockingWaitMs: number;
  private readonly logLimiter = new Limiter(LOG_READS_AT_ONCE);
  closed = false;
  /** Aborts the reads nobody waits for (placement failures) when the driver closes. */
  readonly closing = new AbortController();

  constructor(readonly options: NomadDriverOptions) {
    this.client = new NomadClient(options);
    this.healthTimeoutMs = options.healthTimeoutMs ?? 120_000;
    this.stopTimeoutMs = options.stopTimeoutMs ?? 60_000;
    this.healthPath = options.healthPath ?? '/_svc/health';
    this.blockingWaitMs = options.blockingWaitMs ?? 30_000;
  }

  emit(key: string, container: string, text: string, stream: LogLine['stream'] = 'system'): void {
    this.options.logs?.({ unit: key, container, stream, text, time: new Date() });
  }

  /**
   * The unit, watched from now on. `resume`: the job ran before this driver knew it (svc
   * restarted), so the log pollers start at the end of the running allocations' logs.
   */
  tracked(key: string, group: string, task: string, resume: boolean): Unit {
    const existing = this.units.get(key);
    if (existing) {
      existing.group = group;
      existing.task = task;
      this.followLogs(existing, resume);
      return existing;
    }
    const jobId = nomadJobId(key);
    const { client, healthPath, blockingWaitMs } = this;
    const watcher = new AllocationWatcher({ client, key, jobId, task: () => unit.task, healthPath, blockingWaitMs, probeIntervalMs: 200 });
    const unit: Unit = { key, jobId, group, task, watcher, logs: undefined, requested: undefined, submitted: undefined };
    watcher.changes.on('exit', (view: AllocView) => this.exited(unit, view));
    this.units.set(key, unit);
    if (!this.closed) watcher.start();
    this.followLogs(unit, resume);
    return unit;
  }

  private followLogs(unit: Unit, resume: boolean): void {
    const { options, client } = this;
    if (this.closed || unit.logs || !options.logs || !unit.task) return;
    unit.logs = new LogPoller({
      api: {
        url: client.url,
        token: options.token || undefined,
        namespace: client.namespace,
        region: client.region,
        requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
      },
      key: unit.key,
      task: () => unit.task,
      watcher: unit.watcher,
      sink: options.logs,
      limiter: this.logLimiter,
      resume,
      pollMs: options.logPollMs ?? 500,
      readBytes: options.logReadBytes ?? 256 * 1024,
    });
  }

  /** A healthy allocation ended while Nomad was to keep it running: like a local container that exits by itself. */
  private exited(unit: Unit, view: AllocView): void {
    const { stub } = view;
    const states = stub.TaskStates ?? {};
    const events = (states[unit.task] ?? Object.values(states)[0])?.Events ?? [];
    const terminated = events.findLast((e) => e.Type === 'Terminated')?.DisplayMessage;
    const details = [...new Set([terminated, events.at(-1)?.DisplayMessage].filter(Boolean))].join('; ');
    const reason = `exited unexpectedly: Nomad allocation ${stub.ClientStatus}${stub.ClientDescription ? ` (${stub.ClientDescription})` : ''}${details ? `: ${details}` : ''}`;
    this.emit(unit.key, stub.ID, `container ${stub.ID} (${stub.Name}) ${reason}`);
    this.options.onContainerExit?.({ key: unit.key }, stub.ID, reason);
  }

  async untrack(unit: Unit): Promise<void> {
    await Promise.all([unit.watcher.stop(), unit.logs?.stop()]);
  }

  /** The unit, read from Nomad when this driver has not submitted it (svc restarted: the jobs kept running). */
  async unitOf(key: string): Promise<Unit> {
    const known = this.units.get(key);
    if (known) return known;
    const jobId = nomadJobId(key);
    let job: NomadJobSpec;
    try {
      job = (await this.client.get<NomadJobSpec>(jobPath(jobId))).body;
    } catch (error) {
      if (error instanceof SvcError && error.code === 'not_found')
        throw new SvcError('not_found', `no deployment unit ${key}: ${error.message}`, { details: error.details, cause: error });
      throw error;
    }
    const group = job.TaskGroups[0];
    if (!group) throw new SvcError('nomad_rejected', `Nomad job ${jobId} has no task group`);
    return this.tracked(key, group.Name, group.Tasks?.[0]?.Name ?? '', true);
  }

  /** Stops every watcher and log poller; waits that are in progress end with `shutting_down`. */
  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    const all = [...this.units.values()];
    this.units.clear();
    for (const unit of all) unit.watcher.changes.emit('change');
    await Promise.all(all.map((unit) => this.untrack(unit)));
  }
}
