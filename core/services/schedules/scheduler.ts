/**
 * The leader's scheduler (embedded platform): runs each scheduled function of
 * every deployed, unpaused app on its ticks, through remote runs. Only the
 * leader runs it (`lead` with the leadership's signal); each tick is claimed
 * in the state store first (ScheduleHistory.claim), so a tick runs once even
 * across a leader change. Without `overlap`, a tick that comes while the
 * previous run still runs is recorded as skipped.
 *
 * Missed ticks: when a replica takes the lead (or svc starts again) and the
 * last tick claimed is older than the latest tick due, that latest tick runs
 * once at once and the earlier missed ones are not run; a schedule that
 * appears later (a deploy, a resume) starts with its next tick. On Nomad
 * Nomad runs the periodic jobs itself and this loop does not run.
 */
import { isSvcError } from '../../model/errors.js';
import { sleep } from '../../infra/state/backoff.js';
import type { Deployment } from '../deployments/types.js';
import type { RunManager } from '../runs/runs.js';
import { describeSchedule, nextTick } from '../../model/workload/schedule.js';
import type { AppSpec, ScheduleSpec } from '../../model/workload/types.js';
import { ScheduleHistory } from './history.js';
import { runOnce } from './run-once.js';
import type { ScheduledRun } from './types.js';

/** How often the loop looks for due ticks: a tick starts at most this late. */
const POLL_MS = 200;

export interface ScheduleRunnerOptions {
  readonly deployments: { list(): Deployment[] };
  readonly runs: Pick<RunManager, 'create' | 'call' | 'end'>;
  readonly history: ScheduleHistory;
  readonly log: (text: string) => void;
  readonly report: (error: unknown) => void;
}

export interface Scheduled {
  readonly workspace: string;
  readonly app: string;
  readonly fn: string;
  readonly schedule: ScheduleSpec;
  readonly spec: AppSpec;
  readonly bundleSha256: string;
}

/** What the platform starts when it leads and stops when it stops: this runner, or Nomad's periodic jobs (nomad-periodic.ts). */
export interface ScheduleLeader {
  lead(signal: AbortSignal): void;
  close(): Promise<void>;
}

interface Timer {
  /** The schedule and the bundle as they were when `due` was computed: a redeploy that changes them starts over. */
  readonly described: string;
  due: Date;
  running: number;
  /** The remote run kept warm between ticks (run-once.ts); null before the first or after a failed start. */
  remoteRun: string | null;
}

export class ScheduleRunner implements ScheduleLeader {
  readonly #options: ScheduleRunnerOptions;
  readonly #timers = new Map<string, Timer>();
  readonly #inFlight = new Set<Promise<void>>();
  #loop: Promise<void> | null = null;
  readonly #closed = new AbortController();

  constructor(options: ScheduleRunnerOptions) {
    this.#options = options;
  }

  /** Runs the schedules until `signal` aborts (the leadership is lost, or svc stops). */
  lead(signal: AbortSignal): void {
    if (this.#loop !== null || this.#closed.signal.aborted) return;
    this.#loop = this.#run(AbortSignal.any([signal, this.#closed.signal]))
      .catch(this.#options.report)
      .finally(() => {
        this.#loop = null;
        this.#timers.clear();
      });
  }

  /** Stops the loop; the runs in flight give their calls up, and their records are written. */
  async close(): Promise<void> {
    this.#closed.abort();
    await this.#loop;
    await Promise.allSettled([...this.#inFlight]);
  }

  async #run(signal: AbortSignal): Promise<void> {
    let first = true;
    while (!signal.aborted) {
      try {
        await this.#step(signal, first);
        first = false;
      } catch (error) {
        this.#options.report(error);
      }
      await sleep(POLL_MS, signal).catch(() => {}); // aborted: the loop ends
    }
  }

  async #step(signal: AbortSignal, recovering: boolean): Promise<void> {
    const now = new Date();
    const current = scheduledFunctions(this.#options.deployments.list());
    const seen = new Set<string>();
    for (const scheduled of current) {
      if (signal.aborted) return;
      const key = `${scheduled.workspace}/${scheduled.app}/${scheduled.fn}`;
      seen.add(key);
      const described = `${describeSchedule(scheduled.schedule)} of ${scheduled.bundleSha256}`;
      let timer = this.#timers.get(key);
      if (timer === undefined || timer.described !== described) {
        if (timer !== undefined) this.#endRemoteRun(scheduled.workspace, timer);
        timer = {
          described,
          due: await this.#firstDue(scheduled, now, recovering && timer === undefined),
          running: timer?.running ?? 0,
          remoteRun: null,
        };
        this.#timers.set(key, timer);
      }
      if (timer.due > now) continue;
      const tick = timer.due;
      timer.due = nextTick(scheduled.schedule, now);
      await this.#fire(scheduled, timer, tick, signal);
    }
    // Removed by a redeploy, paused or deleted: no more ticks.
    for (const [key, timer] of this.#timers) {
      if (seen.has(key)) continue;
      this.#endRemoteRun(key.slice(0, key.indexOf('/')), timer);
      this.#timers.delete(key);
    }
  }

  #endRemoteRun(workspace: string, timer: Timer): void {
    if (timer.remoteRun === null) return;
    void this.#options.runs.end(workspace, timer.remoteRun).catch(() => {}); // it idled out already
    timer.remoteRun = null;
  }

  /** The first tick to run: the latest missed one when a new leader recovers, else the next one. */
  async #firstDue(scheduled: Scheduled, now: Date, recovering: boolean): Promise<Date> {
    const { history } = this.#options;
    if (recovering) await this.#closeUnfinished(scheduled);
    const last = await history.lastTick(scheduled.workspace, scheduled.app, scheduled.fn);
    if (!recovering || last === null || nextTick(scheduled.schedule, last.tick) > now)
      return nextTick(scheduled.schedule, last !== null && last.tick > now ? last.tick : now);
    let missed = nextTick(scheduled.schedule, last.tick);
    // The latest tick at or before now; a period gets there in one step.
    if ('every' in scheduled.schedule)
      missed = new Date(Math.floor(now.getTime() / (scheduled.schedule.every * 1000)) * scheduled.schedule.every * 1000);
    for (let next = nextTick(scheduled.schedule, missed); next <= now; next = nextTick(scheduled.schedule, next)) missed = next;
    this.#options.log(
      `${scheduled.app}/${scheduled.fn}: ticks were missed while no svc replica led; the latest, ${missed.toISOString()}, runs now`,
    );
    return missed;
  }

  /** Runs a previous leader left `running` ended with it. */
  async #closeUnfinished(scheduled: Scheduled): Promise<void> {
    const { history } = this.#options;
    for (const run of await history.unfinished(scheduled.workspace, scheduled.app)) {
      if (run.function !== scheduled.fn) continue;
      const endedAt = new Date().toISOString();
      await history.record(scheduled.workspace, {
        ...run,
        status: 'failed',
        endedAt,
        durationMs: null,
        error: { code: 'worker_crashed', message: 'the svc replica that ran it stopped before the run ended' },
      });
    }
  }

  /** Claims the tick (once across replicas), then runs it or records it skipped. */
  async #fire(scheduled: Scheduled, timer: Timer, tick: Date, signal: AbortSignal): Promise<void> {
    const { history } = this.#options;
    const { workspace, app, fn } = scheduled;
    const last = await history.lastTick(workspace, app, fn);
    if (last !== null && last.tick >= tick) return; // another leader ran it
    if (!(await history.claim(workspace, app, fn, tick, last?.index ?? 0))) return;
    const id = ScheduleHistory.runId(tick);
    const base = { id, app, function: fn, scheduledAt: tick.toISOString() };
    if (timer.running > 0 && !scheduled.schedule.overlap) {
      await history.record(workspace, {
        ...base,
        startedAt: null,
        endedAt: null,
        status: 'skipped',
        durationMs: null,
        error: null,
        logs: [],
      });
      return;
    }
    // A run overlapping another gets a remote run of its own, ended after it; so does every run of a function
    // that names secrets, so that each tick starts with the values stored now (a kept container keeps its env).
    const overlapping = timer.running > 0;
    const fresh = overlapping || (scheduled.spec.workloads.find((w) => w.name === fn)?.secrets ?? []).length > 0;
    timer.running += 1;
    const started = new Date();
    const running: ScheduledRun = {
      ...base,
      startedAt: started.toISOString(),
      endedAt: null,
      status: 'running',
      durationMs: null,
      error: null,
      logs: [],
    };
    const done = (async () => {
      try {
        await history.record(workspace, running);
        const { remoteRun, ...outcome } = await runOnce(this.#options.runs, {
          workspace,
          spec: scheduled.spec,
          bundleSha256: scheduled.bundleSha256,
          function: fn,
          runId: id,
          signal,
          remoteRun: fresh ? null : timer.remoteRun,
          endAfter: fresh,
        });
        if (!fresh) timer.remoteRun = remoteRun;
        const ended = new Date();
        await history.record(workspace, {
          ...running,
          ...outcome,
          endedAt: ended.toISOString(),
          durationMs: ended.getTime() - started.getTime(),
        });
      } catch (error) {
        if (!(isSvcError(error) && error.code === 'shutting_down')) this.#options.report(error);
      } finally {
        timer.running -= 1;
      }
    })();
    this.#inFlight.add(done);
    void done.finally(() => this.#inFlight.delete(done));
  }
}

/** The scheduled functions of deployed, unpaused apps that run from a bundle. */
export function scheduledFunctions(deployments: readonly Deployment[]): Scheduled[] {
  return deployments.flatMap((deployment) => {
    if (deployment.ref.stage !== 'deployed' || deployment.paused) return [];
    return deployment.spec.workloads.flatMap((workload) => {
      const bundleSha256 = deployment.workloads.find((w) => w.name === workload.name)?.bundleSha256 ?? null;
      if (workload.kind !== 'function' || !workload.schedule || bundleSha256 === null) return [];
      return [
        {
          workspace: deployment.ref.workspace,
          app: deployment.ref.app,
          fn: workload.name,
          schedule: workload.schedule,
          spec: deployment.spec,
          bundleSha256,
        },
      ];
    });
  });
}
