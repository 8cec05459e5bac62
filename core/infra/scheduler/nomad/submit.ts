/**
 * The Nomad driver's `submit` and `plan`: the unit's job compiled, under the driver's ID, and
 * registered with check-and-set (or planned with the counts the registered job has now).
 */
import { SvcError } from '../../../model/errors.js';
import { INSTALL_META_KEY } from '../../../../jobs/names.js';
import { nomadJobId, UNIT_META_KEY } from '../../../model/nomad-job-id.js';
import type { DeploymentUnit, UnitPlan } from '../types.js';
import { ENFORCE_INDEX_PREFIX } from './client.js';
import { jobPath, type NomadDriverState } from './driver-state.js';
import { summarizePlan, type NomadPlanResponse } from './plan.js';
import { writeSecretVariable } from './secret-variables.js';
import { ensureCsiVolume } from './csi-volumes.js';
import { ensureHostVolumes, volumeNodeNames } from './host-volumes.js';
import type { NomadJobSpec } from './types.js';

async function readModifyIndex(state: NomadDriverState, jobId: string): Promise<number> {
  try {
    return (await state.client.get<{ JobModifyIndex: number }>(jobPath(jobId))).body.JobModifyIndex;
  } catch (error) {
    if (error instanceof SvcError && error.code === 'not_found') return 0;
    throw error;
  }
}

/** Registers the job; true when it existed before. */
async function register(state: NomadDriverState, jobId: string, job: NomadJobSpec): Promise<boolean> {
  for (let attempt = 0; ; attempt += 1) {
    const index = await readModifyIndex(state, jobId);
    try {
      await state.client.put(jobPath(jobId), { Job: job, EnforceIndex: true, JobModifyIndex: index, PreserveCounts: index > 0 });
      return index > 0;
    } catch (error) {
      // Someone registered the job between our read and our write: read again, once.
      const lost =
        error instanceof SvcError &&
        error.code === 'conflict' &&
        (error.details as { text?: string }).text?.startsWith(ENFORCE_INDEX_PREFIX);
      if (!lost || attempt >= 1) throw error;
    }
  }
}

/** The unit's job as the driver registers it: compiled, under the driver's ID, the unit key in its Meta. */
async function jobOf(state: NomadDriverState, unit: DeploymentUnit, jobId: string): Promise<NomadJobSpec> {
  const { options } = state;
  const { Job } = await options.compile(unit);
  if (!Job.TaskGroups[0]) throw new SvcError('internal', `the job compiled for ${unit.key} has no task group`);
  // The driver owns the ID (the serial of a serving key is part of it) and records the key in Meta.
  return {
    ...Job,
    ID: jobId,
    Meta: {
      ...(Job.Meta ?? {}),
      [UNIT_META_KEY]: unit.key,
      ...(options.install === undefined ? {} : { [INSTALL_META_KEY]: options.install }),
    },
  };
}

/**
 * The job with each group's count as the registered job has it now: `submit` registers with
 * `PreserveCounts`, which the plan endpoint does not take, so a plan of the compiled counts
 * would show the scale-downs and placements a submit never makes.
 */
async function withCurrentCounts(state: NomadDriverState, jobId: string, job: NomadJobSpec): Promise<NomadJobSpec> {
  let current: NomadJobSpec;
  try {
    current = (await state.client.get<NomadJobSpec>(jobPath(jobId))).body;
  } catch (error) {
    if (error instanceof SvcError && error.code === 'not_found') return job;
    throw error;
  }
  const counts = new Map(current.TaskGroups.map((group) => [group.Name, group.Count]));
  return {
    ...job,
    TaskGroups: job.TaskGroups.map((group) => (counts.has(group.Name) ? { ...group, Count: counts.get(group.Name)! } : group)),
  };
}

/** Compiles the unit's job and registers it. */
export async function submitJob(state: NomadDriverState, unit: DeploymentUnit, jobId: string): Promise<void> {
  const job = await jobOf(state, unit, jobId);
  const group = job.TaskGroups[0]!;
  // Before the job: its template waits for the Variable, and the first allocation should not.
  if (unit.secretEnv !== undefined) await writeSecretVariable(state.client, jobId, unit.secretEnv);
  // Likewise its volumes: Nomad places the job only on nodes that have its host volumes, and only once its CSI volumes exist.
  await ensureVolumes(state, unit);
  const existed = await register(state, jobId, job);
  // A job that existed has allocations from before this driver: their old lines are not replayed.
  state.tracked(unit.key, group.Name, group.Tasks?.[0]?.Name ?? '', existed).submitted = unit;
}

async function ensureVolumes(state: NomadDriverState, unit: DeploymentUnit): Promise<void> {
  const { csi } = state.options;
  const mounts = unit.mounts ?? [];
  if (csi === undefined) {
    const nodes = volumeNodeNames(state.options.volumeNodes ?? []);
    await ensureHostVolumes(state.client, state.hostVolumes, unit.ref.workspace, mounts, nodes);
    return;
  }
  await Promise.all(
    [...new Set(mounts.map((mount) => mount.volume))].map((volume) => ensureCsiVolume(state.client, csi, unit.ref.workspace, volume)),
  );
}

export async function submit(state: NomadDriverState, unit: DeploymentUnit): Promise<void> {
  const jobId = nomadJobId(unit.key);
  // Known from now on, so that purgeUnknownJobs() never takes a job this driver is registering.
  state.submitting.add(jobId);
  try {
    await submitJob(state, unit, jobId);
  } finally {
    state.submitting.delete(jobId);
  }
}

export async function plan(state: NomadDriverState, unit: DeploymentUnit): Promise<UnitPlan> {
  const jobId = nomadJobId(unit.key);
  const job = await withCurrentCounts(state, jobId, await jobOf(state, unit, jobId));
  const { body } = await state.client.post<NomadPlanResponse>(`${jobPath(jobId)}/plan`, { Job: job, Diff: true });
  return summarizePlan(jobId, body);
}
