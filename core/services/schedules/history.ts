/**
 * The kept history of scheduled runs, in the state store (file store or
 * Consul KV alike): one key per run, the last HISTORY_PER_FUNCTION per
 * function, and per function the last tick claimed. Claiming a tick is a
 * compare-and-set, so that a tick runs at most once even when two replicas
 * believe they lead for a moment.
 */
import { randomBytes } from 'node:crypto';
import { storedJson } from '../../model/store/stored-fields.js';
import { SvcError } from '../../model/errors.js';
import { getJson, putJson } from '../../model/store/json.js';
import type { StateStore } from '../../model/store/types.js';
import { isPlainObject } from '../../model/workload/manifest/checks.js';
import { RUN_ID_PATTERN, runKey, runsPrefix, tickKey } from '../../model/schedule-keys.js';
import type { ScheduledRun, ScheduledRunSummary } from './types.js';

/** Runs kept per function; older ones go as new ones are recorded. */
export const HISTORY_PER_FUNCTION = 100;

export class ScheduleHistory {
  readonly #store: StateStore;

  constructor(store: StateStore) {
    this.#store = store;
  }

  /** A new run id for a tick: sorts by tick, unique. */
  static runId(tick: Date): string {
    return `sched-${String(tick.getTime()).padStart(13, '0')}-${randomBytes(3).toString('hex')}`;
  }

  /** The last tick claimed for a function, or null before its first. */
  async lastTick(workspace: string, app: string, fn: string): Promise<{ tick: Date; index: number } | null> {
    const entry = await getJson(this.#store, tickKey(workspace, app, fn), tickRecord);
    return entry === null ? null : { tick: new Date(entry.value.tick), index: entry.modifyIndex };
  }

  /** Claims `tick` if the last claim is still the one read (`index`, 0 for none); false when another replica came first. */
  claim(workspace: string, app: string, fn: string, tick: Date, index: number): Promise<boolean> {
    return putJson(this.#store, tickKey(workspace, app, fn), { tick: tick.toISOString() }, { cas: index });
  }

  /** Stores (or updates) a run, then drops the oldest runs of its function past the bound. */
  async record(workspace: string, run: ScheduledRun): Promise<void> {
    await putJson(this.#store, runKey(workspace, run.app, run.function, run.id), run);
    const keys = await this.#store.keys(runsPrefix(workspace, run.app, run.function));
    for (const key of keys.slice(0, Math.max(0, keys.length - HISTORY_PER_FUNCTION))) await this.#store.delete(key);
  }

  /** The runs of an app (of one function when given), newest first, without their logs. */
  async list(workspace: string, app: string, fn?: string, limit = HISTORY_PER_FUNCTION): Promise<ScheduledRunSummary[]> {
    const entries = await this.#store.list(runsPrefix(workspace, app, fn));
    const runs = entries.map((entry) => storedJson(entry, runRecord));
    runs.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return runs.slice(0, limit).map(({ logs: _logs, ...summary }) => summary);
  }

  /** One run with its logs; `not_found` when the app has no such run. */
  async get(workspace: string, app: string, id: string): Promise<ScheduledRun> {
    if (!RUN_ID_PATTERN.test(id)) throw notScheduledRunId(id, app);
    const keys = await this.#store.keys(runsPrefix(workspace, app));
    const key = keys.find((k) => k.endsWith(`/${id}`));
    const entry = key === undefined ? null : await getJson(this.#store, key, runRecord);
    if (entry === null) {
      throw new SvcError(
        'not_found',
        `the app ${app} has no scheduled run ${id}: only the last ${HISTORY_PER_FUNCTION} runs of each function are kept.`,
        { hint: `List the runs with svc app runs ${app}.` },
      );
    }
    return entry.value;
  }

  /** Runs still `running` in the store: a previous leader stopped before they ended. */
  async unfinished(workspace: string, app: string): Promise<ScheduledRun[]> {
    const entries = await this.#store.list(runsPrefix(workspace, app));
    return entries.map((entry) => storedJson(entry, runRecord)).filter((run) => run.status === 'running');
  }
}

function runRecord(value: unknown, key: string): ScheduledRun {
  if (isPlainObject(value) && typeof value.id === 'string' && typeof value.status === 'string' && Array.isArray(value.logs))
    return value as unknown as ScheduledRun;
  throw new SvcError('state_corrupt', `the scheduled run stored under ${JSON.stringify(key)} is not one svc wrote`, { details: { key } });
}

function tickRecord(value: unknown, key: string): { tick: string } {
  if (isPlainObject(value) && typeof value.tick === 'string' && !Number.isNaN(Date.parse(value.tick))) return { tick: value.tick };
  throw new SvcError('state_corrupt', `the schedule tick stored under ${JSON.stringify(key)} is not one svc wrote`, { details: { key } });
}

/** The `bad_request` of an id that is not a scheduled run id; the hint lists the app's runs. */
export function notScheduledRunId(id: string, app: string): SvcError {
  return new SvcError('bad_request', `${JSON.stringify(id)} is not a scheduled run id (sched-<13 digits>-<6 hex>).`, {
    hint: `List the runs with svc app runs ${app}.`,
  });
}
