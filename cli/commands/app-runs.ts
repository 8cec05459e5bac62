/**
 * `svc app runs <app> [--logs <run id>] [--json]`: the scheduled runs of a
 * deployed app (`GET /api/v1/apps/:app/runs`), newest first, after its
 * schedules and their next tick; with --logs, one run's output.
 */
import type { ScheduledRun, ScheduledRunSummary } from '../../core/services/schedules/types.js';
import { connect, type CommandContext } from '../context.js';
import { colorStatus, formatTable } from '../table.js';
import { shortTime } from '../time.js';
import { appPath, type JsonFlag } from './app.js';

export interface AppRunsFlags extends JsonFlag {
  /** A run id: print that run's logs instead of the list. */
  readonly logs?: string;
}

interface RunsAnswer {
  readonly schedules: readonly { function: string; description: string; nextRunAt: string | null }[];
  readonly runs: readonly ScheduledRunSummary[];
}

export async function appRuns(context: CommandContext, app: string, flags: AppRunsFlags = {}): Promise<void> {
  const { client } = await connect(context);
  const { out } = context;
  if (flags.logs !== undefined) {
    const { run } = await client.get<{ run: ScheduledRun }>(`${appPath(app)}/runs/${encodeURIComponent(flags.logs)}`);
    if (flags.json) {
      out.result(JSON.stringify({ run }, null, 2));
      return;
    }
    out.step(`${run.function} ${run.id}: ${run.status}${run.error === null ? '' : `: ${run.error.message}`}`);
    for (const line of run.logs) out.result(line.stream === 'stdout' ? line.text : `${out.color.dim(`[${line.stream}]`)} ${line.text}`);
    return;
  }
  const answer = await client.get<RunsAnswer>(`${appPath(app)}/runs`);
  if (flags.json) {
    out.result(JSON.stringify(answer, null, 2));
    return;
  }
  if (answer.schedules.length === 0)
    out.step(`${app} has no scheduled function: schedule=svc.Cron(…) or svc.Period(…) on @app.function schedules one`);
  for (const schedule of answer.schedules) {
    out.step(
      `${schedule.function}: ${schedule.description}, next ${schedule.nextRunAt === null ? 'when the app is resumed' : shortTime(schedule.nextRunAt)}`,
    );
  }
  if (answer.runs.length === 0) {
    out.step('no scheduled run yet');
    return;
  }
  const rows = answer.runs.map((run) => [
    run.id,
    run.function,
    colorStatus(run.status, out.color),
    shortTime(run.scheduledAt),
    run.durationMs === null ? out.color.dim('-') : `${(run.durationMs / 1000).toFixed(1)}s`,
    run.error?.message ?? '',
  ]);
  for (const line of formatTable(['RUN', 'FUNCTION', 'STATUS', 'SCHEDULED', 'DURATION', 'ERROR'], rows, out.color)) out.result(line);
  out.step(`one run's logs: svc app runs ${app} --logs <RUN>`);
}
