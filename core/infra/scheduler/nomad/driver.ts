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
 * `usage` is what Nomad's allocation stats say, sampled every few seconds (alloc-usage.ts).
 * `exec` and `terminal` run a command in a running allocation's task through Nomad's exec WebSocket
 * (alloc-exec.ts).
 *
 * With `logs`, each allocation's stdout and stderr lines go to the sink as the
 * local driver's do (log-poller.ts). With `onContainerExit`, an allocation
 * that was healthy and ends while Nomad was to keep it running (it crashed or
 * its node was lost: svc did not stop it) is reported once (watcher.ts `exit`).
 */
import type { Enforcement } from '../../processes/cgroups/types.js';
import type { DeploymentUnit } from '../types.js';
import { nomadJobId } from '../../../model/nomad-job-id.js';
import { SvcError } from '../../../model/errors.js';
import { allocExec, allocTerminal, type ExecTarget } from './alloc-exec.js';
import { AllocationUsage, USAGE_SAMPLE_MS } from './alloc-usage.js';
import { LOG_TAIL, logTail } from './allocation-failure.js';
import { NomadDriverState } from './driver-state.js';
import type { NomadDriverOptions } from './options.js';
import { purgeUnknownJobs } from './purge.js';
import { withRequested } from './requested.js';
import { scale } from './scale.js';
import { removeJob, stopContainer } from './stop-remove.js';
import { plan, submit } from './submit.js';
import type { AllocationLogsOptions, NomadContainerStatus, NomadDriver } from './types.js';

export type { NomadDriverOptions } from './options.js';

/** Nomad's raw_exec puts no cgroup limit on a task (its `Resources` only place it). */
const RAW_EXEC_LIMITS: Enforcement = {
  enforced: false,
  chosen: true,
  why: 'nomadDriver is "raw_exec", which runs tasks without isolation, as the Nomad client\'s user; set nomadDriver to "exec" (the default) or "docker" to have Nomad enforce them',
};

const UNMEASURED_TEXT =
  "Nomad collects no stats for this allocation: svc usage and svc container list count none of its CPU and memory until its client's agent configuration has telemetry { publish_allocation_metrics = true } (docs/operators.md)";

/** The driver's operations over one shared state (driver-state.ts), each in the file of its job. */
export function createNomadDriver(options: NomadDriverOptions): NomadDriver {
  const state = new NomadDriverState(options);
  const healthyAllocations = (key: string) =>
    (state.units.get(key)?.watcher.status() ?? []).filter((c) => c.state === 'healthy').map((c) => c.id);
  const usage = new AllocationUsage(state.client, Date.now, (allocId) => {
    const key = [...state.units.keys()].find((k) => healthyAllocations(k).includes(allocId));
    if (key !== undefined) state.emit(key, allocId, UNMEASURED_TEXT);
  });
  // Sampled all the time the driver is open: CPU is a rate on Nomad, integrated between samples.
  const sampler = setInterval(
    () => void usage.sample([...state.units.keys()].flatMap(healthyAllocations)).catch(() => {}),
    USAGE_SAMPLE_MS,
  ).unref();
  return {
    name: 'nomad',

    ...(options.taskDriver === 'raw_exec' ? { resourceLimits: RAW_EXEC_LIMITS } : {}),

    jobId: nomadJobId,

    submit: (unit: DeploymentUnit) => submit(state, unit),

    plan: (unit: DeploymentUnit) => plan(state, unit),

    // The job's Scaling block holds min and max (Nomad refuses a count past them): registered again, counts kept.
    rescale: (unit: DeploymentUnit) => submit(state, unit),

    purgeUnknownJobs: (keep = () => false) => purgeUnknownJobs(state, keep),

    scale: (key, count) => scale(state, key, count),

    stop: (key, containerId) => stopContainer(state, key, containerId),

    remove: (key) => removeJob(state, key),

    status(key) {
      const unit = state.units.get(key);
      return unit ? withRequested(key, unit.jobId, unit.group, unit.watcher.status(), unit.requested) : [];
    },

    async refresh(key) {
      const unit = state.units.get(key);
      if (!unit) return [];
      await unit.watcher.refresh();
      return unit.watcher.status();
    },

    async allocationLogs(key, containerId, logOptions: AllocationLogsOptions = {}) {
      const unit = await state.unitOf(key);
      return logTail(state, unit, containerId, logOptions.stream ?? 'stderr', logOptions.tail ?? LOG_TAIL);
    },

    exec: (key, containerId, request) => allocExec(state.client, execTarget(state, key, containerId), request),

    terminal: (key, containerId, request) => allocTerminal(state.client, execTarget(state, key, containerId), request),

    usage: (key) => usage.of(healthyAllocations(key)),

    close: () => {
      clearInterval(sampler);
      return state.close();
    },
  };
}

/** The running allocation of the unit with this id, and its task; `not_found` or `conflict` otherwise. */
function execTarget(state: NomadDriverState, key: string, containerId: string): ExecTarget {
  const unit = state.units.get(key);
  const container = unit?.watcher.status().find((c) => c.id === containerId);
  if (unit === undefined || container === undefined) throw new SvcError('not_found', `no container ${containerId} in ${key}.`);
  if (container.state !== 'healthy')
    throw new SvcError('conflict', `container ${containerId} is ${container.state}: it needs to be running.`);
  return { allocId: containerId, task: unit.task };
}

export { nomadJobId } from '../../../model/nomad-job-id.js';
export type { NomadContainerStatus };
