/**
 * `compilePeriodicJob(workload, context)`: a scheduled function on Nomad is a
 * periodic batch job (`Periodic` with `SpecType: "cron"`, `TimeZone` and
 * `ProhibitOverlap` unless the schedule allows overlapping runs). Nomad
 * launches one child job per tick (`<id>/periodic-<unix time>`), whose task
 * runs `python -m svc.runtime once`: the function once, with no arguments; a
 * failed run is a failed allocation. A period becomes the cron spec that
 * writes it (Nomad's cron takes a seconds field: 7 fields with the year);
 * a period no cron spec writes is refused.
 */
import { SvcError } from '../core/model/errors.js';
import { describeSchedule } from '../core/model/workload/schedule.js';
import type { ScheduleSpec, Workload } from '../core/model/workload/types.js';
import type { JobContext } from './context.js';
import { MINUTE, SECOND } from './durations.js';
import { jobMeta, jobUi } from './meta.js';
import { jobId, TASK_NAME } from './names.js';
import { ephemeralDisk, logConfig, taskResources } from './resources.js';
import { secretsTemplates } from './secrets-template.js';
import { baseEnv, bundleArtifact, driverConfig } from './task.js';
import type { NomadJobRegistration, PeriodicConfig, Task } from './types.js';

export function compilePeriodicJob(workload: Workload, context: JobContext): NomadJobRegistration {
  const schedule = workload.schedule;
  if (workload.kind !== 'function' || !schedule) throw new Error(`compilePeriodicJob: ${workload.name} is no scheduled function`);
  const id = context.jobId ?? jobId({ workspace: context.workspace, app: context.app, stage: context.stage, workload: workload.name });
  return {
    Job: {
      ID: id,
      Name: id,
      Type: 'batch',
      Region: context.cluster.region,
      Namespace: context.cluster.namespace,
      Datacenters: [...context.cluster.datacenters],
      Priority: 50,
      Meta: { ...jobMeta(workload, context), svc_schedule: describeSchedule(schedule) },
      UI: jobUi(workload, context),
      Periodic: periodicConfig(schedule),
      TaskGroups: [
        {
          Name: workload.name,
          Count: 1,
          // A run that fails is recorded failed, not tried again: the next tick is the next try.
          RestartPolicy: { Attempts: 0, Interval: 5 * MINUTE, Delay: 5 * SECOND, Mode: 'fail' },
          ReschedulePolicy: { Attempts: 0, Unlimited: false },
          EphemeralDisk: { ...ephemeralDisk },
          Meta: { svc_workload: workload.name },
          Tasks: [onceTask(workload, context, id)],
        },
      ],
    },
  };
}

export function periodicConfig(schedule: ScheduleSpec): PeriodicConfig {
  return {
    Enabled: true,
    SpecType: 'cron',
    Spec: nomadCronSpec(schedule),
    TimeZone: 'cron' in schedule ? schedule.timezone : 'UTC',
    ProhibitOverlap: !schedule.overlap,
  };
}

/**
 * The spec Nomad's cron (hashicorp/cronexpr) reads: a cron expression as it
 * is (5 fields: minute to day of week); a period as 7 fields (second, minute,
 * hour, day of month, month, day of week, year) when it divides a minute, an
 * hour or a day, or is one day.
 */
export function nomadCronSpec(schedule: ScheduleSpec): string {
  if ('cron' in schedule) return schedule.cron;
  const s = schedule.every;
  if (s < 60 && 60 % s === 0) return `${s === 1 ? '*' : `*/${s}`} * * * * * *`;
  if (s % 60 === 0 && s < 3600 && 60 % (s / 60) === 0) return `0 */${s / 60} * * * * *`;
  if (s % 3600 === 0 && s < 86_400 && 24 % (s / 3600) === 0) return `0 0 */${s / 3600} * * * *`;
  if (s === 86_400) return '0 0 0 * * * *';
  throw new SvcError(
    'manifest_invalid',
    `a period of ${s} seconds cannot run on Nomad: Nomad schedules with cron expressions, and none runs every ${s} seconds.`,
    {
      hint: 'Use a period that divides a minute, an hour or a day (svc.Period(seconds=15), svc.Period(minutes=10), svc.Period(hours=6)) or one day, or a svc.Cron expression.',
    },
  );
}

/** The task of a tick: the function once, then exit (0: it returned; 6: it raised). */
function onceTask(workload: Workload, context: JobContext, jobId: string): Task {
  const args = ['-m', 'svc.runtime', 'once', '--root', '${NOMAD_TASK_DIR}/app', '--entry', context.entry, '--workload', workload.name];
  return {
    Name: TASK_NAME,
    Driver: context.cluster.driver,
    Config: driverConfig(context, args, []),
    Env: baseEnv(workload, context),
    Artifacts: [bundleArtifact(context)],
    Resources: taskResources(workload.resources, context.cluster),
    LogConfig: { ...logConfig },
    KillTimeout: 30 * SECOND,
    KillSignal: 'SIGTERM',
    // A tick's child job reads the periodic job's Variable: Nomad gives a child's workload identity its parent's
    // job ID (Job.GetIDforWorkloadIdentity), so `nomad/jobs/<this job's id>` is the path its template may read.
    ...secretsTemplates(workload, jobId),
  };
}
