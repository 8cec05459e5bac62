/**
 * The Nomad driver's `stop` (one container: the job's count lowered by one) and `remove` (the
 * job purged), each waiting until the allocations concerned have stopped.
 */
import { SvcError } from '../../../model/errors.js';
import { nomadJobId } from '../../../model/nomad-job-id.js';
import { jobPath, views, type NomadDriverState } from './driver-state.js';
import { deleteSecretVariable } from './secret-variables.js';
import { waitFor } from './wait-for.js';
import { isLive, isTerminal, type AllocView } from './watcher.js';

/**
 * Lowers the count by one. Nomad stops the live allocation with the highest name index on a
 * scale-down, so that one stops, and a `system` line says so when it is not the one asked for.
 */
export async function stopContainer(state: NomadDriverState, key: string, containerId: string): Promise<void> {
  const unit = state.units.get(key);
  if (!unit) return;
  await unit.watcher.refresh();
  const target = unit.watcher.allocs.get(containerId);
  if (!target || !isLive(target.stub)) return;
  const live = views(unit).filter((v) => isLive(v.stub));
  const index = (v: AllocView) => Number(/\[(\d+)\]$/.exec(v.stub.Name)?.[1] ?? 0);
  const highest = live.reduce((a, b) => (index(b) > index(a) ? b : a));
  if (highest.stub.ID !== containerId) {
    state.emit(
      key,
      containerId,
      `Nomad stops the allocation with the highest index when the count drops: ${highest.stub.Name} (${highest.stub.ID}) stops instead of ${target.stub.Name} (${containerId})`,
    );
  }
  const chosen = highest.stub.ID;
  await state.client.post(`${jobPath(unit.jobId)}/scale`, {
    Count: live.length - 1,
    Target: { Job: unit.jobId, Group: unit.group },
    Message: `svc: stop container ${containerId} of ${key}`,
  });
  await unit.watcher.refresh();
  await waitFor(
    state,
    unit,
    state.stopTimeoutMs,
    () => {
      const view = unit.watcher.allocs.get(chosen);
      return view === undefined || isTerminal(view.stub);
    },
    () => undefined,
    async () => new SvcError('container_failed', `allocation ${chosen} of ${key} did not stop within ${state.stopTimeoutMs / 1000} s`),
  );
}

/** Purges the job and its secret Variable, then waits until its allocations have stopped. Idempotent. */
export async function removeJob(state: NomadDriverState, key: string): Promise<void> {
  const jobId = nomadJobId(key);
  try {
    await state.client.delete(jobPath(jobId), { purge: true });
  } catch (error) {
    if (!(error instanceof SvcError && error.code === 'not_found')) throw error;
  }
  await deleteSecretVariable(state.client, jobId);
  const unit = state.units.get(key) ?? state.tracked(key, '', '', true);
  try {
    await unit.watcher.refresh();
    await waitFor(
      state,
      unit,
      state.stopTimeoutMs,
      () => views(unit).every((v) => isTerminal(v.stub)),
      () => undefined,
      async () =>
        new SvcError(
          'container_failed',
          `the allocations of Nomad job ${jobId} did not stop within ${state.stopTimeoutMs / 1000} s after it was purged`,
        ),
    );
  } finally {
    state.units.delete(key);
    await state.untrack(unit);
  }
}
