/**
 * The Nomad driver's `purgeUnknownJobs`: the jobs of this svc installation that no deployment
 * runs (left by a previous leader or a crashed svc), purged with their secret Variables.
 */
import { SvcError } from '../../../model/errors.js';
import { INSTALL_META_KEY } from '../../../../jobs/names.js';
import { UNIT_META_KEY } from '../../../model/nomad-job-id.js';
import { jobPath, type NomadDriverState } from './driver-state.js';
import { deleteSecretVariable } from './secret-variables.js';

/** Purges them and returns their job IDs; without `install` it purges nothing. `keep(key)`: a unit key to leave alone. */
export async function purgeUnknownJobs(state: NomadDriverState, keep: (key: string) => boolean): Promise<string[]> {
  const { install } = state.options;
  if (install === undefined) return [];
  const listed =
    (await state.client.get<{ ID: string; Meta?: Record<string, string> | null }[] | null>('/v1/jobs', { prefix: 'svc-', meta: true }))
      .body ?? [];
  const known = new Set([...state.units.values()].map((unit) => unit.jobId));
  const unknown = listed.filter((job) => {
    const key = job.Meta?.[UNIT_META_KEY];
    return (
      key !== undefined && job.Meta?.[INSTALL_META_KEY] === install && !known.has(job.ID) && !state.submitting.has(job.ID) && !keep(key)
    );
  });
  for (const job of unknown) {
    try {
      await state.client.delete(jobPath(job.ID), { purge: true });
    } catch (error) {
      if (!(error instanceof SvcError && error.code === 'not_found')) throw error;
    }
    await deleteSecretVariable(state.client, job.ID);
    state.emit(
      job.Meta![UNIT_META_KEY]!,
      '',
      `purged Nomad job ${job.ID}: no deployment of this svc runs it (left by a previous leader or a crashed svc)`,
    );
  }
  return unknown.map((job) => job.ID);
}
