/**
 * Scheduled runs of a deployed app (`svc app runs`): its schedules with their
 * next tick, the runs kept (newest first), one run with its logs. The runs
 * are read from the state store, so any replica answers. See core/schedules.
 */
import { ScheduleHistory } from '../schedules/history.js';
import { describeSchedule, nextTick } from '../workload/schedule.js';
import { requireApp } from './apps.js';
import * as doc from './openapi/app-runs.js';
import type { ApiRoute } from './types.js';

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
      const runs = await new ScheduleHistory(services.controlPlane.store).list(principal.workspace, deployment.ref.app);
      return { status: 200, body: { schedules, runs } };
    },
  },
  {
    method: 'GET',
    path: '/apps/:app/runs/:id',
    auth: 'token',
    body: 'none',
    openapi: doc.getScheduledRun,
    async handle({ params, principal }, services) {
      const deployment = requireApp(params, principal, services);
      return { status: 200, body: { run: await new ScheduleHistory(services.controlPlane.store).get(principal.workspace, deployment.ref.app, params['id']!) } };
    },
  },
];
