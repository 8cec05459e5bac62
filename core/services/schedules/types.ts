/** Scheduled runs of deployed functions: what svc keeps of each (docs/api.md "Scheduled runs"). */

/**
 * - `running`: started, not ended yet;
 * - `succeeded`: the function returned;
 * - `failed`: it raised, its container died, or it could not start (`error` says why);
 * - `skipped`: the tick came while the previous run still ran (no overlap asked for).
 */
export type ScheduledRunStatus = 'running' | 'succeeded' | 'failed' | 'skipped';

export interface ScheduledRunLogLine {
  readonly time: string;
  readonly stream: 'stdout' | 'stderr' | 'system';
  readonly text: string;
}

export interface ScheduledRun {
  /** `sched-<13 digits: the tick in ms since the epoch>-<6 hex>`: sorts by tick. */
  readonly id: string;
  readonly app: string;
  readonly function: string;
  /** The tick this run is for. */
  readonly scheduledAt: string;
  readonly startedAt: string | null;
  readonly endedAt: string | null;
  readonly status: ScheduledRunStatus;
  readonly durationMs: number | null;
  /** Why it failed: the exception (`ValueError: …`) or svc's error code and message. */
  readonly error: { readonly code: string | null; readonly message: string } | null;
  /** What the run printed (and the traceback of a failure), the last 64 KiB of it. */
  readonly logs: readonly ScheduledRunLogLine[];
}

/** The list view: a run without its logs. */
export type ScheduledRunSummary = Omit<ScheduledRun, 'logs'>;
