/**
 * Scheduled runs of a deployed app (`svc app runs`): its schedules with their
 * next tick, the runs kept (newest first), one run with its logs. The runs
 * are read from the state store (so any replica answers), or from Nomad
 * where Nomad runs the schedules. See core/schedules.
 */
import type { Deployment } from '../deployments/types.js';
import { ScheduleHistory } from '../schedules/history.js';
import type { ScheduledRun, ScheduledRunSummary } from '../schedules/types.js';
import { describeSchedule, nextTick } from '../workload/schedule.js';
import { requireApp } from './apps.js';
import * as doc from './openapi/app-runs.js';
import type { ApiRoute, ApiServices } from './types.js';

export const appRunRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/apps/:app/runs',
    auth: 'token',
    body: 'none',
    openapi: doc.listScheduledRuns,
    async handle({ params, principal }, services) {
      const deployment = requireApp(params, principal, services);
      const now = new Date();
      const schedules = deployment.spec.workloads.flatMap((workload) =>
        workload.schedule
          ? [{ function: workload.name, schedule: workload.schedule, description: describeSchedule(workload.schedule), nextRunAt: deployment.paused ? null : nextTick(workload.schedule, now).toISOString() }]
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
    openapi: doc.getScheduledRun,
    async handle({ params, principal }, services) {
      return { status: 200, body: { run: await scheduledRunOf(services, requireApp(params, principal, services), params['id']!) } };
    },
  },
];

/** The app's scheduled runs, newest first, from where they are kept (the API and the dashboard read them so). */
export function scheduledRunsOf(services: Pick<ApiServices, 'scheduledRuns' | 'controlPlane'>, deployment: Deployment): Promise<ScheduledRunSummary[]> {
  const { workspace, app } = deployment.ref;
  return services.scheduledRuns
    ? services.scheduledRuns.list(workspace, app, scheduledFunctionsOf(deployment))
    : new ScheduleHistory(services.controlPlane.store).list(workspace, app);
}

export function scheduledRunOf(services: Pick<ApiServices, 'scheduledRuns' | 'controlPlane'>, deployment: Deployment, id: string): Promise<ScheduledRun> {
  const { workspace, app } = deployment.ref;
  return services.scheduledRuns
    ? services.scheduledRuns.get(workspace, app, scheduledFunctionsOf(deployment), id)
    : new ScheduleHistory(services.controlPlane.store).get(workspace, app, id);
}

function scheduledFunctionsOf(deployment: Deployment): string[] {
  return deployment.spec.workloads.filter((w) => w.schedule).map((w) => w.name);
}
