/**
 * Scheduled runs on Nomad, read from Nomad: each tick is a child job of the
 * function's periodic job (`<id>/periodic-<unix seconds>`, listed with
 * `GET /v1/jobs?prefix=<id>/periodic-`), and its allocation says how it
 * went (`complete`: succeeded; `failed`: the function raised, exit code 6, or
 * its task failed) and holds its logs. Nomad keeps children until its
 * garbage collection; ticks it skipped for ProhibitOverlap leave no child,
 * so no run here is `skipped`.
 */
import { createHash } from 'node:crypto';
import { SvcError } from '../../model/errors.js';
import type { NomadClient } from '../../infra/scheduler/nomad/client.js';
import { jobId } from '../../../jobs/names.js';
import { TASK_NAME } from '../../../jobs/names.js';
import { RUN_ID_PATTERN } from '../../model/schedule-keys.js';
import type { ScheduledRun, ScheduledRunLogLine, ScheduledRunSummary } from './types.js';

/** The last bytes of each stream a run's logs show. */
const LOG_BYTES = 64 * 1024;

interface ChildStub {
  readonly ID: string;
  readonly Status: string;
  readonly SubmitTime?: number;
}

interface AllocStub {
  readonly ID: string;
  readonly ClientStatus: string;
  readonly TaskStates?: Record<
    string,
    {
      State?: string;
      Failed?: boolean;
      StartedAt?: string | null;
      FinishedAt?: string | null;
      Events?: { Type?: string; DisplayMessage?: string; ExitCode?: number }[];
    }
  > | null;
}

export interface ScheduledRunSource {
  list(workspace: string, app: string, functions: readonly string[]): Promise<ScheduledRunSummary[]>;
  get(workspace: string, app: string, functions: readonly string[], id: string): Promise<ScheduledRun>;
}

export class NomadRunSource implements ScheduledRunSource {
  readonly #client: Pick<NomadClient, 'get' | 'text'>;

  constructor(client: Pick<NomadClient, 'get' | 'text'>) {
    this.#client = client;
  }

  async list(workspace: string, app: string, functions: readonly string[]): Promise<ScheduledRunSummary[]> {
    const runs = (await Promise.all(functions.map((fn) => this.#runsOf(workspace, app, fn)))).flat().map(({ run }) => run);
    return runs.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  }

  async get(workspace: string, app: string, functions: readonly string[], id: string): Promise<ScheduledRun> {
    if (!RUN_ID_PATTERN.test(id))
      throw new SvcError('bad_request', `${JSON.stringify(id)} is not a scheduled run id (sched-<13 digits>-<6 hex>).`);
    for (const fn of functions) {
      const found = (await this.#runsOf(workspace, app, fn)).find(({ run }) => run.id === id);
      if (found === undefined) continue;
      const logs = found.alloc === null ? [] : [...(await this.#logs(found.alloc, 'stdout')), ...(await this.#logs(found.alloc, 'stderr'))];
      return { ...found.run, logs };
    }
    throw new SvcError('not_found', `the app ${app} has no scheduled run ${id} that Nomad still keeps.`, {
      hint: `List the runs with svc app runs ${app}.`,
    });
  }

  async #runsOf(workspace: string, app: string, fn: string): Promise<{ run: ScheduledRunSummary; alloc: string | null }[]> {
    const parent = jobId({ workspace, app, stage: 'deployed', workload: fn });
    const children = (await this.#client.get<ChildStub[] | null>('/v1/jobs', { prefix: `${parent}/periodic-` })).body ?? [];
    return Promise.all(
      children.map(async (child) => {
        const allocs = (await this.#client.get<AllocStub[] | null>(`/v1/job/${encodeURIComponent(child.ID)}/allocations`)).body ?? [];
        return { run: runOf(app, fn, child, allocs[0]), alloc: allocs[0]?.ID ?? null };
      }),
    );
  }

  async #logs(alloc: string, stream: 'stdout' | 'stderr'): Promise<ScheduledRunLogLine[]> {
    let text: string;
    try {
      text = await this.#client.text(`/v1/client/fs/logs/${encodeURIComponent(alloc)}`, {
        task: TASK_NAME,
        type: stream,
        origin: 'end',
        offset: LOG_BYTES,
        plain: true,
      });
    } catch (error) {
      if (error instanceof SvcError && error.code === 'not_found') return []; // collected by Nomad
      throw error;
    }
    return text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => ({ time: '', stream, text: line }));
  }
}

/** A child job and its allocation as a run: the tick is in the child's ID (`/periodic-<unix seconds>`). */
function runOf(app: string, fn: string, child: ChildStub, alloc: AllocStub | undefined): ScheduledRunSummary {
  const tick = Number(/\/periodic-(\d+)$/.exec(child.ID)?.[1] ?? 0) * 1000;
  const id = `sched-${String(tick).padStart(13, '0')}-${createHash('sha256').update(child.ID).digest('hex').slice(0, 6)}`;
  const task = alloc?.TaskStates?.[TASK_NAME];
  const startedAt = task?.StartedAt && !task.StartedAt.startsWith('0001') ? new Date(task.StartedAt).toISOString() : null;
  const endedAt = task?.FinishedAt && !task.FinishedAt.startsWith('0001') ? new Date(task.FinishedAt).toISOString() : null;
  const status = alloc === undefined || child.Status !== 'dead' ? 'running' : alloc.ClientStatus === 'complete' ? 'succeeded' : 'failed';
  const exit = task?.Events?.findLast((event) => event.Type === 'Terminated');
  return {
    id,
    app,
    function: fn,
    scheduledAt: new Date(tick).toISOString(),
    startedAt,
    endedAt,
    status,
    durationMs: startedAt !== null && endedAt !== null ? Date.parse(endedAt) - Date.parse(startedAt) : null,
    error: status === 'failed' ? { code: null, message: exit?.DisplayMessage ?? `the allocation ${alloc?.ID ?? ''} failed` } : null,
  };
}
