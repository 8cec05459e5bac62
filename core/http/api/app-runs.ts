/**
 * Scheduled runs of a deployed app (`svc app runs`): its schedules with their
 * next tick, the runs kept (newest first), one run with its logs. The runs
 * are read from the state store (so any replica answers), or from Nomad
 * where Nomad runs the schedules. See core/services/schedules.
 */
import type { Deployment } from '../../services/deployments/types.js';
import { notScheduledRunId, ScheduleHistory } from '../../services/schedules/history.js';
import { RUN_ID_PATTERN as SCHEDULED_RUN_ID } from '../../model/schedule-keys.js';
import type { ScheduledRun, ScheduledRunSummary } from '../../services/schedules/types.js';
import { describeSchedule, nextTick } from '../../model/workload/schedule.js';
import { requireApp } from './apps.js';
import { answer, APP, BAD_QUERY, error, holding, NAME_INVALID, ref } from './openapi/shared.js';
import type { Parameter } from './openapi/types.js';
import type { ApiRoute, ApiServices } from './types.js';

const RUN_ID: Parameter = {
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: SCHEDULED_RUN_ID.source },
  description: "The scheduled run's id.",
  refusal: { code: 'bad_request', refuse: (id, { params }) => notScheduledRunId(String(id), params.app!) },
};
const NO_APP = error("`not_found`: the caller's workspace has no such deployed app (an app of another workspace is not found either).");

export const appRunRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/apps/:app/runs',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'listScheduledRuns',
      summary:
        "The app's schedules (each scheduled function, its schedule and its next tick) and its scheduled runs, newest first, without their logs: the last 100 of each function are kept.",
      parameters: [APP],
      responses: { 200: answer('The schedules and the runs.', ref('ScheduledRunList')), 400: BAD_QUERY, 404: NO_APP, 422: NAME_INVALID },
    },
    async handle({ params, principal }, services) {
      const deployment = requireApp(params, principal, services);
      const now = new Date();
      const schedules = deployment.spec.workloads.flatMap((workload) =>
        workload.schedule
          ? [
              {
                function: workload.name,
                schedule: workload.schedule,
                description: describeSchedule(workload.schedule),
                nextRunAt: deployment.paused ? null : nextTick(workload.schedule, now).toISOString(),
              },
            ]
          : [],
      );
      return { status: 200, body: { schedules, runs: await scheduledRunsOf(services, deployment) } };
    },
  },
  {
    method: 'GET',
    path: '/apps/:app/runs/:id',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getScheduledRun',
      summary: 'One scheduled run with its logs: what the function printed and, when it failed, its traceback (the last 64 KiB).',
      parameters: [APP, RUN_ID],
      responses: {
        200: answer('The run.', holding('run', ref('ScheduledRun'))),
        400: error('`bad_request`: the id is not a scheduled run id (`sched-`, 13 digits, `-`, 6 hex digits), or a query parameter.'),
        404: error('`not_found`: no such app, or the app has no such run (only the last 100 runs of each function are kept).'),
        422: NAME_INVALID,
      },
    },
    async handle({ params, principal }, services) {
      return { status: 200, body: { run: await scheduledRunOf(services, requireApp(params, principal, services), params.id!) } };
    },
  },
];

/** The app's scheduled runs, newest first, from where they are kept (the API and the dashboard read them so). */
export function scheduledRunsOf(
  services: Pick<ApiServices, 'scheduledRuns' | 'controlPlane'>,
  deployment: Deployment,
): Promise<ScheduledRunSummary[]> {
  const { workspace, app } = deployment.ref;
  return services.scheduledRuns
    ? services.scheduledRuns.list(workspace, app, scheduledFunctionsOf(deployment))
    : new ScheduleHistory(services.controlPlane.store).list(workspace, app);
}

export function scheduledRunOf(
  services: Pick<ApiServices, 'scheduledRuns' | 'controlPlane'>,
  deployment: Deployment,
  id: string,
): Promise<ScheduledRun> {
  const { workspace, app } = deployment.ref;
  return services.scheduledRuns
    ? services.scheduledRuns.get(workspace, app, scheduledFunctionsOf(deployment), id)
    : new ScheduleHistory(services.controlPlane.store).get(workspace, app, id);
}

function scheduledFunctionsOf(deployment: Deployment): string[] {
  return deployment.spec.workloads.filter((w) => w.schedule).map((w) => w.name);
}
