/**
 * The Nomad driver: each deployment unit is one Nomad service job (its ID
 * from the unit key, job-id.ts), compiled by the injected job compiler,
 * whose first task group's `Count` is the unit's number of containers; each
 * allocation is one container.
 *
 * - `submit`: registers the job with check-and-set (`EnforceIndex` with the
 *   `JobModifyIndex` just read, 0 for a new job) and `PreserveCounts` on
 *   redeploy; a lost race is retried once after reading again, then
 *   `conflict`. A new job starts at the compiled `Count` (the compiler puts
 *   `min_containers` there, as Nomad's `Scaling.Min` requires).
 * - `scale`: `POST /v1/job/:id/scale`, then waits (blocking queries) until
 *   exactly `count` allocations run and are healthy and none is stopping;
 *   an allocation that fails, or a wait past `healthTimeoutMs`, rejects with
 *   `container_failed` and its last log lines. Scale sets an absolute count,
 *   so two calls in a row never start a container twice.
 * - `stop`: lowers the count by one. Nomad has no "stop this allocation and
 *   lower the count" call (`/v1/allocation/:id/stop` reschedules the
 *   allocation, and the stand-in does not have it), and on a scale-down its
 *   reconciler stops the allocations with the highest name index. So the
 *   container asked for stops when it is the highest-indexed live one; else
 *   Nomad's choice stops instead, and a `system` log line says so.
 * - `remove`: `DELETE /v1/job/:id?purge=true`, then waits until the
 *   allocations have stopped. Idempotent (an unknown job is fine).
 * - `close`: stops the watchers and log pollers. Jobs keep running: the cluster does not stop with svc.
 *
 * With `logs`, each allocation's stdout and stderr lines go to the sink as the
 * local driver's do (log-poller.ts). With `onContainerExit`, an allocation
 * that was healthy and ends while Nomad was to keep it running (it crashed or
 * its node was lost: svc did not stop it) is reported once (watcher.ts `exit`).
 */
import type { CallObserver } from '../../metrics/platform-metrics.js';
import { SvcError } from '../../../model/errors.js';
import type { Enforcement } from '../../processes/cgroups/types.js';
import type { DeploymentUnit, LogLine, LogSink } from '../types.js';
import { ENFORCE_INDEX_PREFIX, NomadClient } from './client.js';
import { INSTALL_META_KEY, nomadJobId, UNIT_META_KEY } from '../../../model/nomad-job-id.js';
import { Limiter, LogPoller } from './log-poller.js';
import type { AllocationLogsOptions, CompileUnit, NomadContainerStatus, NomadDriver, NomadJobSpec } from './types.js';
import { describeFailure, summarizePlan, type AllocationMetric, type NomadPlanResponse } from './plan.js';
import { withRequested, type Requested } from './requested.js';
import { AllocationWatcher, isLive, isTerminal, type AllocView } from './watcher.js';
import { deleteSecretVariable, writeSecretVariable } from './secret-variables.js';

export interface NomadDriverOptions {
  /** Told how long each non-blocking Nomad request took (`/metrics`). */
  readonly observe?: CallObserver | undefined;
  /** Nomad agent address, e.g. `http://127.0.0.1:4646`. */
  readonly url: string;
  /** ACL token (secret ID); see docs/operators.md for the policy it needs. */
  readonly token?: string | undefined;
  readonly namespace?: string | undefined;
  readonly region?: string | undefined;
  /** The job compiler (jobs/ `compileJob` with its context). */
  readonly compile: CompileUnit;
  /** How long `scale` waits for new allocations to become healthy (default 120 s). */
  readonly healthTimeoutMs?: number;
  /** How long `scale` down, `stop` and `remove` wait for allocations to stop (default 60 s). */
  readonly stopTimeoutMs?: number;
  /** The route every worker answers 200 on once ready (default `/_svc/health`). */
  readonly healthPath?: string;
  /** `wait` of the blocking queries (default 30 s). */
  readonly blockingWaitMs?: number;
  /** Bound on an ordinary request (default 30 s). */
  readonly requestTimeoutMs?: number;
  /**
   * Where every allocation's stdout and stderr lines go (read from Nomad's logs endpoint,
   * container = allocation ID), with the driver's own `system` lines (scale, stop choices).
   */
  readonly logs?: LogSink;
  /** How often the logs of a running allocation are read (default 500 ms). */
  readonly logPollMs?: number;
  /** At most this many new bytes per read of one stream of one allocation (default 256 KiB). */
  readonly logReadBytes?: number;
  /**
   * Called once when a healthy allocation ends by itself: Nomad `ClientStatus` failed or
   * complete while its `DesiredStatus` is still `run`, or lost (its node is down). Never for
   * scale-downs, `stop` or `remove`. Same shape as the local driver's, with only the unit's key.
   */
  readonly onContainerExit?: (unit: { key: string }, containerId: string, reason: string) => void;
  /**
   * Which svc installation this is (written into every job's `Meta.svc_install`):
   * `purgeUnknownJobs` only takes jobs of the same installation. Absent: it purges nothing.
   */
  readonly install?: string | undefined;
  /** The task driver of the compiled jobs: `raw_exec` runs tasks unisolated, which every deploy then says. */
  readonly taskDriver?: string | undefined;
}

interface Unit {
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

const LOG_TAIL = 30;
/** How long a scale reads its evaluation for a placement failure. */
const PLACEMENT_READ_MS = 10_000;

/** The fields of an evaluation (`GET /v1/job/:id/evaluations`) a scale reads. */
interface NomadEvaluation {
  readonly ModifyIndex: number;
  readonly FailedTGAllocs?: Record<string, AllocationMetric> | null;
}
/** Nomad's raw_exec puts no cgroup limit on a task (its `Resources` only place it). */
const RAW_EXEC_LIMITS: Enforcement = {
  enforced: false,
  chosen: true,
  why: 'nomadDriver is "raw_exec", which runs tasks without isolation, as the Nomad client\'s user; set nomadDriver to "exec" (the default) or "docker" to have Nomad enforce them',
};
/** Log reads in flight at once, over all units. */
const LOG_READS_AT_ONCE = 8;

export function createNomadDriver(options: NomadDriverOptions): NomadDriver {
  const client = new NomadClient(options);
  const units = new Map<string, Unit>();
  /** Job IDs of submits in progress (not yet in `units`). */
  const submitting = new Set<string>();
  const healthTimeoutMs = options.healthTimeoutMs ?? 120_000;
  const stopTimeoutMs = options.stopTimeoutMs ?? 60_000;
  const healthPath = options.healthPath ?? '/_svc/health';
  const blockingWaitMs = options.blockingWaitMs ?? 30_000;
  const logLimiter = new Limiter(LOG_READS_AT_ONCE);
  let closed = false;
  /** Aborts the reads nobody waits for (placement failures) when the driver closes. */
  const closing = new AbortController();

  function emit(key: string, container: string, text: string, stream: LogLine['stream'] = 'system'): void {
    options.logs?.({ unit: key, container, stream, text, time: new Date() });
  }

  const jobPath = (id: string) => `/v1/job/${encodeURIComponent(id)}`;

  /**
   * The unit, watched from now on. `resume`: the job ran before this driver knew it (svc
   * restarted), so the log pollers start at the end of the running allocations' logs.
   */
  function tracked(key: string, group: string, task: string, resume: boolean): Unit {
    const existing = units.get(key);
    if (existing) {
      existing.group = group;
      existing.task = task;
      followLogs(existing, resume);
      return existing;
    }
    const jobId = nomadJobId(key);
    const watcher = new AllocationWatcher({ client, key, jobId, task: () => unit.task, healthPath, blockingWaitMs, probeIntervalMs: 200 });
    const unit: Unit = { key, jobId, group, task, watcher, logs: undefined, requested: undefined, submitted: undefined };
    watcher.changes.on('exit', (view: AllocView) => exited(unit, view));
    units.set(key, unit);
    if (!closed) watcher.start();
    followLogs(unit, resume);
    return unit;
  }

  function followLogs(unit: Unit, resume: boolean): void {
    if (closed || unit.logs || !options.logs || !unit.task) return;
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
      limiter: logLimiter,
      resume,
      pollMs: options.logPollMs ?? 500,
      readBytes: options.logReadBytes ?? 256 * 1024,
    });
  }

  /** A healthy allocation ended while Nomad was to keep it running: like a local container that exits by itself. */
  function exited(unit: Unit, view: AllocView): void {
    const { stub } = view;
    const states = stub.TaskStates ?? {};
    const events = (states[unit.task] ?? Object.values(states)[0])?.Events ?? [];
    const terminated = events.findLast((e) => e.Type === 'Terminated')?.DisplayMessage;
    const details = [...new Set([terminated, events.at(-1)?.DisplayMessage].filter(Boolean))].join('; ');
    const reason = `exited unexpectedly: Nomad allocation ${stub.ClientStatus}${stub.ClientDescription ? ` (${stub.ClientDescription})` : ''}${details ? `: ${details}` : ''}`;
    emit(unit.key, stub.ID, `container ${stub.ID} (${stub.Name}) ${reason}`);
    options.onContainerExit?.({ key: unit.key }, stub.ID, reason);
  }

  async function untrack(unit: Unit): Promise<void> {
    await Promise.all([unit.watcher.stop(), unit.logs?.stop()]);
  }

  /** The unit, read from Nomad when this driver has not submitted it (svc restarted: the jobs kept running). */
  async function unitOf(key: string): Promise<Unit> {
    const known = units.get(key);
    if (known) return known;
    const jobId = nomadJobId(key);
    let job: NomadJobSpec;
    try {
      job = (await client.get<NomadJobSpec>(jobPath(jobId))).body;
    } catch (error) {
      if (error instanceof SvcError && error.code === 'not_found')
        throw new SvcError('not_found', `no deployment unit ${key}: ${error.message}`, { details: error.details, cause: error });
      throw error;
    }
    const group = job.TaskGroups[0];
    if (!group) throw new SvcError('nomad_rejected', `Nomad job ${jobId} has no task group`);
    return tracked(key, group.Name, group.Tasks?.[0]?.Name ?? '', true);
  }

  async function readModifyIndex(jobId: string): Promise<number> {
    try {
      return (await client.get<{ JobModifyIndex: number }>(jobPath(jobId))).body.JobModifyIndex;
    } catch (error) {
      if (error instanceof SvcError && error.code === 'not_found') return 0;
      throw error;
    }
  }

  /** Registers the job; true when it existed before. */
  async function register(jobId: string, job: NomadJobSpec): Promise<boolean> {
    for (let attempt = 0; ; attempt += 1) {
      const index = await readModifyIndex(jobId);
      try {
        await client.put(jobPath(jobId), { Job: job, EnforceIndex: true, JobModifyIndex: index, PreserveCounts: index > 0 });
        return index > 0;
      } catch (error) {
        // Someone registered the job between our read and our write: read again, once.
        const lost =
          error instanceof SvcError &&
          error.code === 'conflict' &&
          (error.details as { text?: string }).text?.startsWith(ENFORCE_INDEX_PREFIX);
        if (!lost || attempt >= 1) throw error;
      }
    }
  }

  async function logTail(unit: Unit, allocId: string, stream: 'stdout' | 'stderr', tail: number): Promise<string[]> {
    const text = await client.text(`/v1/client/fs/logs/${encodeURIComponent(allocId)}`, {
      task: unit.task,
      type: stream,
      plain: true,
      origin: 'end',
      offset: 64 * 1024,
    });
    const lines = text.split('\n');
    if (lines.at(-1) === '') lines.pop();
    return lines.slice(-tail);
  }

  async function failure(unit: Unit, view: AllocView | undefined, reason: string): Promise<SvcError> {
    const logs: string[] = [];
    if (view) {
      for (const stream of ['stdout', 'stderr'] as const) {
        try {
          logs.push(...(await logTail(unit, view.stub.ID, stream, LOG_TAIL)).map((line) => `[${stream}] ${line}`));
        } catch {
          // The allocation's logs may be gone (garbage-collected); the reason still stands.
        }
      }
      const events = Object.values(view.stub.TaskStates ?? {})
        .flatMap((s) => s.Events ?? [])
        .map((e) => e.DisplayMessage)
        .filter(Boolean);
      if (events.length) logs.push(...events.slice(-5).map((e) => `[nomad] ${e}`));
    }
    const container = view?.stub.ID ?? '';
    emit(unit.key, container, reason);
    return new SvcError('container_failed', `${reason}${logs.length ? `\nLast log lines:\n${logs.join('\n')}` : ''}`, {
      details: { unit: unit.key, container, job: unit.jobId, logs },
    });
  }

  /**
   * Resolves once `done()` holds; rejects with what `failed()` returns, or after `timeoutMs`.
   * Wakes on every change the watcher sees (blocking queries) and on health probes.
   */
  function waitFor(
    unit: Unit,
    timeoutMs: number,
    done: () => boolean,
    failed: () => Promise<SvcError> | undefined,
    timedOut: () => Promise<SvcError>,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const finish = (error?: SvcError | Promise<SvcError>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        unit.watcher.changes.off('change', check);
        if (error === undefined) resolve();
        else void Promise.resolve(error).then(reject, reject);
      };
      const check = () => {
        if (closed) return finish(new SvcError('shutting_down', `the Nomad driver was closed while waiting for ${unit.key}`));
        if (done()) return finish();
        const failure = failed();
        if (failure) finish(failure);
      };
      const timer = setTimeout(() => finish(timedOut()), timeoutMs);
      unit.watcher.changes.on('change', check);
      check();
    });
  }

  /** Sets the job's count and waits until exactly `count` allocations run healthy and none is stopping. */
  async function scaleTo(unit: Unit, key: string, count: number): Promise<void> {
    // Allocations that had already ended do not count as failures of this scale.
    await unit.watcher.refresh();
    const endedBefore = new Set(
      views(unit)
        .filter((v) => isTerminal(v.stub))
        .map((v) => v.stub.ID),
    );
    const { index: scaledAt } = await client.post<unknown>(`${jobPath(unit.jobId)}/scale`, {
      Count: count,
      Target: { Job: unit.jobId, Group: unit.group },
      Message: `svc: scale ${key} to ${count}`,
    });
    emit(key, '', `asked Nomad to run ${count} allocation${count === 1 ? '' : 's'} of job ${unit.jobId}`);
    // A cold start that Nomad cannot place fails at once (a deploy says why now, not after the time-out);
    // a scale-up beside running allocations waits: Nomad places the rest when room appears.
    const cold = !views(unit).some((v) => isLive(v.stub));
    let unplaced: string | null = null;
    const placement = placementFailure(unit, scaledAt);
    void placement.then((reason) => {
      if (reason === null) return;
      unplaced = reason;
      emit(
        key,
        '',
        `Nomad cannot place every allocation of job ${unit.jobId} yet${cold ? '' : ' (it places them when room appears)'}: ${reason}`,
      );
      unit.watcher.changes.emit('change');
    });
    await unit.watcher.refresh();
    const live = () => views(unit).filter((v) => isLive(v.stub));
    const stopping = () => views(unit).filter((v) => v.stub.DesiredStatus !== 'run' && !isTerminal(v.stub));
    await waitFor(
      unit,
      healthTimeoutMs,
      () => live().length === count && live().every((v) => v.healthyAt !== undefined) && stopping().length === 0,
      () => {
        const failed = views(unit).find(
          (v) => !endedBefore.has(v.stub.ID) && (v.stub.ClientStatus === 'failed' || v.stub.DeploymentStatus?.Healthy === false),
        );
        if (failed)
          return failure(
            unit,
            failed,
            `container ${failed.stub.ID} (${failed.stub.Name}) of ${key} failed: ${failed.stub.ClientDescription || 'unhealthy'}`,
          );
        if (cold && unplaced !== null && live().length === 0)
          return failure(unit, undefined, `Nomad cannot place any allocation of job ${unit.jobId}: ${unplaced}`);
        return undefined;
      },
      () => {
        const slow = live().find((v) => v.healthyAt === undefined);
        const reason = slow
          ? `container ${slow.stub.ID} (${slow.stub.Name}) of ${key} did not become healthy within ${healthTimeoutMs / 1000} s (Nomad: ${slow.stub.ClientStatus})`
          : `Nomad did not reach ${count} allocation${count === 1 ? '' : 's'} of job ${unit.jobId} within ${healthTimeoutMs / 1000} s (${live().length} live, ${stopping().length} stopping)${unplaced ? `: ${unplaced}` : unit.watcher.error ? `: ${unit.watcher.error.message}` : ''}`;
        return failure(unit, slow, reason);
      },
    );
  }

  /**
   * Why Nomad could not place the unit's group since the scale (`FailedTGAllocs` of an
   * evaluation of the job modified at or after `sinceIndex`: no node with room, a constraint no
   * node meets), or null. Not the scale's own evaluation alone: Nomad may cancel it for another
   * of the job's that did the placing. Reads the job's evaluations with blocking queries for at
   * most `PLACEMENT_READ_MS`; a failed read explains nothing.
   */
  async function placementFailure(unit: Unit, sinceIndex: number): Promise<string | null> {
    // Without the scale's index, older evaluations could not be told from its own.
    if (sinceIndex <= 0) return null;
    const deadline = Date.now() + PLACEMENT_READ_MS;
    let index = 0;
    try {
      while (!closed && Date.now() < deadline) {
        const { body, index: next } = await client.get<NomadEvaluation[] | null>(
          `${jobPath(unit.jobId)}/evaluations`,
          {},
          { index, waitMs: Math.max(1, deadline - Date.now()), signal: closing.signal },
        );
        const failed = (body ?? []).find((evaluation) => evaluation.ModifyIndex >= sinceIndex && evaluation.FailedTGAllocs?.[unit.group]);
        if (failed) return describeFailure(unit.group, failed.FailedTGAllocs![unit.group]!);
        index = next;
      }
    } catch {
      // A Nomad that went away: the wait's own error says what matters.
    }
    return null;
  }

  function views(unit: Unit): AllocView[] {
    return [...unit.watcher.allocs.values()];
  }

  /** The unit's job as the driver registers it: compiled, under the driver's ID, the unit key in its Meta. */
  async function jobOf(unit: DeploymentUnit, jobId: string): Promise<NomadJobSpec> {
    const { Job } = await options.compile(unit);
    if (!Job.TaskGroups[0]) throw new SvcError('internal', `the job compiled for ${unit.key} has no task group`);
    // The driver owns the ID (the serial of a serving key is part of it) and records the key in Meta.
    return {
      ...Job,
      ID: jobId,
      Meta: {
        ...(Job.Meta ?? {}),
        [UNIT_META_KEY]: unit.key,
        ...(options.install === undefined ? {} : { [INSTALL_META_KEY]: options.install }),
      },
    };
  }

  /**
   * The job with each group's count as the registered job has it now: `submit` registers with
   * `PreserveCounts`, which the plan endpoint does not take, so a plan of the compiled counts
   * would show the scale-downs and placements a submit never makes.
   */
  async function withCurrentCounts(jobId: string, job: NomadJobSpec): Promise<NomadJobSpec> {
    let current: NomadJobSpec;
    try {
      current = (await client.get<NomadJobSpec>(jobPath(jobId))).body;
    } catch (error) {
      if (error instanceof SvcError && error.code === 'not_found') return job;
      throw error;
    }
    const counts = new Map(current.TaskGroups.map((group) => [group.Name, group.Count]));
    return {
      ...job,
      TaskGroups: job.TaskGroups.map((group) => (counts.has(group.Name) ? { ...group, Count: counts.get(group.Name)! } : group)),
    };
  }

  /** Compiles the unit's job and registers it. */
  async function submitJob(unit: DeploymentUnit, jobId: string): Promise<void> {
    const job = await jobOf(unit, jobId);
    const group = job.TaskGroups[0]!;
    // Before the job: its template waits for the Variable, and the first allocation should not.
    if (unit.secretEnv !== undefined) await writeSecretVariable(client, jobId, unit.secretEnv);
    const existed = await register(jobId, job);
    // A job that existed has allocations from before this driver: their old lines are not replayed.
    tracked(unit.key, group.Name, group.Tasks?.[0]?.Name ?? '', existed).submitted = unit;
  }

  /**
   * Before a cold start (no allocation runs), registers the job again: its bundle URL is
   * signed afresh, so a job scaled from zero long after its submit can still fetch its code.
   * An unchanged job stays as it is in Nomad; with no allocation running, nothing is replaced.
   */
  async function refreshBeforeColdStart(unit: Unit, count: number): Promise<void> {
    if (count === 0 || unit.submitted === undefined) return;
    await unit.watcher.refresh();
    if (views(unit).some((v) => isLive(v.stub))) return;
    await submitJob(unit.submitted, unit.jobId);
  }

  return {
    name: 'nomad',

    ...(options.taskDriver === 'raw_exec' ? { resourceLimits: RAW_EXEC_LIMITS } : {}),

    jobId: nomadJobId,

    async submit(unit: DeploymentUnit) {
      const jobId = nomadJobId(unit.key);
      // Known from now on, so that purgeUnknownJobs() never takes a job this driver is registering.
      submitting.add(jobId);
      try {
        await submitJob(unit, jobId);
      } finally {
        submitting.delete(jobId);
      }
    },

    async plan(unit: DeploymentUnit) {
      const jobId = nomadJobId(unit.key);
      const job = await withCurrentCounts(jobId, await jobOf(unit, jobId));
      const { body } = await client.post<NomadPlanResponse>(`${jobPath(jobId)}/plan`, { Job: job, Diff: true });
      return summarizePlan(jobId, body);
    },

    async purgeUnknownJobs(keep = () => false) {
      if (options.install === undefined) return [];
      const listed =
        (await client.get<{ ID: string; Meta?: Record<string, string> | null }[] | null>('/v1/jobs', { prefix: 'svc-', meta: true }))
          .body ?? [];
      const known = new Set([...units.values()].map((unit) => unit.jobId));
      const unknown = listed.filter((job) => {
        const key = job.Meta?.[UNIT_META_KEY];
        return (
          key !== undefined &&
          job.Meta?.[INSTALL_META_KEY] === options.install &&
          !known.has(job.ID) &&
          !submitting.has(job.ID) &&
          !keep(key)
        );
      });
      for (const job of unknown) {
        try {
          await client.delete(jobPath(job.ID), { purge: true });
        } catch (error) {
          if (!(error instanceof SvcError && error.code === 'not_found')) throw error;
        }
        await deleteSecretVariable(client, job.ID);
        emit(
          job.Meta![UNIT_META_KEY]!,
          '',
          `purged Nomad job ${job.ID}: no deployment of this svc runs it (left by a previous leader or a crashed svc)`,
        );
      }
      return unknown.map((job) => job.ID);
    },

    async scale(key, count) {
      // Before the first await: status() shows the containers this adds at once (requested.ts).
      const requested: Requested = { count, since: new Date() };
      const known = units.get(key);
      if (known) known.requested = requested;
      const unit = known ?? (await unitOf(key));
      unit.requested = requested;
      try {
        await refreshBeforeColdStart(unit, count);
        await scaleTo(unit, key, count);
      } finally {
        if (unit.requested === requested) unit.requested = undefined;
      }
    },

    async stop(key, containerId) {
      const unit = units.get(key);
      if (!unit) return;
      await unit.watcher.refresh();
      const target = unit.watcher.allocs.get(containerId);
      if (!target || !isLive(target.stub)) return;
      const live = views(unit).filter((v) => isLive(v.stub));
      const index = (v: AllocView) => Number(/\[(\d+)\]$/.exec(v.stub.Name)?.[1] ?? 0);
      const highest = live.reduce((a, b) => (index(b) > index(a) ? b : a));
      if (highest.stub.ID !== containerId) {
        emit(
          key,
          containerId,
          `Nomad stops the allocation with the highest index when the count drops: ${highest.stub.Name} (${highest.stub.ID}) stops instead of ${target.stub.Name} (${containerId})`,
        );
      }
      const chosen = highest.stub.ID;
      await client.post(`${jobPath(unit.jobId)}/scale`, {
        Count: live.length - 1,
        Target: { Job: unit.jobId, Group: unit.group },
        Message: `svc: stop container ${containerId} of ${key}`,
      });
      await unit.watcher.refresh();
      await waitFor(
        unit,
        stopTimeoutMs,
        () => {
          const view = unit.watcher.allocs.get(chosen);
          return view === undefined || isTerminal(view.stub);
        },
        () => undefined,
        async () => new SvcError('container_failed', `allocation ${chosen} of ${key} did not stop within ${stopTimeoutMs / 1000} s`),
      );
    },

    async remove(key) {
      const jobId = nomadJobId(key);
      try {
        await client.delete(jobPath(jobId), { purge: true });
      } catch (error) {
        if (!(error instanceof SvcError && error.code === 'not_found')) throw error;
      }
      await deleteSecretVariable(client, jobId);
      const unit = units.get(key) ?? tracked(key, '', '', true);
      try {
        await unit.watcher.refresh();
        await waitFor(
          unit,
          stopTimeoutMs,
          () => views(unit).every((v) => isTerminal(v.stub)),
          () => undefined,
          async () =>
            new SvcError(
              'container_failed',
              `the allocations of Nomad job ${jobId} did not stop within ${stopTimeoutMs / 1000} s after it was purged`,
            ),
        );
      } finally {
        units.delete(key);
        await untrack(unit);
      }
    },

    status(key) {
      const unit = units.get(key);
      return unit ? withRequested(key, unit.jobId, unit.group, unit.watcher.status(), unit.requested) : [];
    },

    async refresh(key) {
      const unit = units.get(key);
      if (!unit) return [];
      await unit.watcher.refresh();
      return unit.watcher.status();
    },

    async allocationLogs(key, containerId, logOptions: AllocationLogsOptions = {}) {
      const unit = await unitOf(key);
      return logTail(unit, containerId, logOptions.stream ?? 'stderr', logOptions.tail ?? LOG_TAIL);
    },

    async close() {
      closed = true;
      closing.abort();
      const all = [...units.values()];
      units.clear();
      for (const unit of all) unit.watcher.changes.emit('change');
      await Promise.all(all.map(untrack));
    },
  };
}

export { nomadJobId } from '../../../model/nomad-job-id.js';
export type { NomadContainerStatus };
