/**
 * The Nomad driver's `scale`: `POST /v1/job/:id/scale`, then a wait until exactly `count`
 * allocations run healthy and none is stopping; a failed allocation, a cold start Nomad cannot
 * place, or the health time-out rejects with `container_failed`.
 */
import { failedPlacement, type NomadEvaluation } from './plan.js';
import { failure } from './allocation-failure.js';
import { jobPath, views, type NomadDriverState, type Unit } from './driver-state.js';
import type { Requested } from './requested.js';
import { submitJob } from './submit.js';
import { waitFor } from './wait-for.js';
import { isLive, isTerminal } from './watcher.js';

/** The longest one blocking read of the job's evaluations waits for a change. */
const BLOCKING_WAIT_MS = 10_000;

export async function scale(state: NomadDriverState, key: string, count: number): Promise<void> {
  // Before the first await: status() shows the containers this adds at once (requested.ts).
  const requested: Requested = { count, since: new Date() };
  const known = state.units.get(key);
  if (known) known.requested = requested;
  const unit = known ?? (await state.unitOf(key));
  unit.requested = requested;
  try {
    await refreshBeforeColdStart(state, unit, count);
    await scaleTo(state, unit, key, count);
  } finally {
    if (unit.requested === requested) unit.requested = undefined;
  }
}

/**
 * Before a cold start (no allocation runs), registers the job again: its bundle URL is
 * signed afresh, so a job scaled from zero long after its submit can still fetch its code.
 * An unchanged job stays as it is in Nomad; with no allocation running, nothing is replaced.
 */
async function refreshBeforeColdStart(state: NomadDriverState, unit: Unit, count: number): Promise<void> {
  if (count === 0 || unit.submitted === undefined) return;
  await unit.watcher.refresh();
  if (views(unit).some((v) => isLive(v.stub))) return;
  await submitJob(state, unit.submitted, unit.jobId);
}

/** Sets the job's count and waits until exactly `count` allocations run healthy and none is stopping. */
async function scaleTo(state: NomadDriverState, unit: Unit, key: string, count: number): Promise<void> {
  const { healthTimeoutMs } = state;
  // Allocations that had already ended do not count as failures of this scale.
  await unit.watcher.refresh();
  const endedBefore = new Set(
    views(unit)
      .filter((v) => isTerminal(v.stub))
      .map((v) => v.stub.ID),
  );
  const { index: scaledAt } = await state.client.post<unknown>(`${jobPath(unit.jobId)}/scale`, {
    Count: count,
    Target: { Job: unit.jobId, Group: unit.group },
    Message: `svc: scale ${key} to ${count}`,
  });
  state.emit(key, '', `asked Nomad to run ${count} allocation${count === 1 ? '' : 's'} of job ${unit.jobId}`);
  // A cold start that Nomad cannot place fails at once (a deploy says why now, not after the time-out);
  // a scale-up beside running allocations waits: Nomad places the rest when room appears.
  const cold = !views(unit).some((v) => isLive(v.stub));
  let unplaced: string | null = null;
  // Read for as long as the wait below lasts (a loaded Nomad may take its time to evaluate), then stopped.
  const waited = new AbortController();
  const placement = placementFailure(state, unit, scaledAt, waited.signal);
  void placement.then((reason) => {
    if (reason === null) return;
    unplaced = reason;
    state.emit(
      key,
      '',
      `Nomad cannot place every allocation of job ${unit.jobId} yet${cold ? '' : ' (it places them when room appears)'}: ${reason}`,
    );
    unit.watcher.changes.emit('change');
  });
  const live = () => views(unit).filter((v) => isLive(v.stub));
  const stopping = () => views(unit).filter((v) => v.stub.DesiredStatus !== 'run' && !isTerminal(v.stub));
  try {
    await unit.watcher.refresh();
    await waitFor(
      state,
      unit,
      healthTimeoutMs,
      () => live().length === count && live().every((v) => v.healthyAt !== undefined) && stopping().length === 0,
      () => {
        const failed = views(unit).find(
          (v) => !endedBefore.has(v.stub.ID) && (v.stub.ClientStatus === 'failed' || v.stub.DeploymentStatus?.Healthy === false),
        );
        if (failed)
          return failure(
            state,
            unit,
            failed,
            `container ${failed.stub.ID} (${failed.stub.Name}) of ${key} failed: ${failed.stub.ClientDescription || 'unhealthy'}`,
          );
        if (cold && unplaced !== null && live().length === 0)
          return failure(state, unit, undefined, `Nomad cannot place any allocation of job ${unit.jobId}: ${unplaced}`);
        return undefined;
      },
      () => {
        const slow = live().find((v) => v.healthyAt === undefined);
        const reason = slow
          ? `container ${slow.stub.ID} (${slow.stub.Name}) of ${key} did not become healthy within ${healthTimeoutMs / 1000} s (Nomad: ${slow.stub.ClientStatus})`
          : `Nomad did not reach ${count} allocation${count === 1 ? '' : 's'} of job ${unit.jobId} within ${healthTimeoutMs / 1000} s (${live().length} live, ${stopping().length} stopping)${unplaced ? `: ${unplaced}` : unit.watcher.error ? `: ${unit.watcher.error.message}` : ''}`;
        return failure(state, unit, slow, reason);
      },
    );
  } finally {
    waited.abort();
  }
}

/**
 * Why Nomad could not place the unit's group since the scale (`FailedTGAllocs` of an
 * evaluation of the job modified at or after `sinceIndex`: no node with room, a constraint no
 * node meets), or null. Not the scale's own evaluation alone: Nomad may cancel it for another
 * of the job's that did the placing. Reads the job's evaluations with blocking queries for
 * as long as the scale waits (until `stop` aborts); a failed read explains nothing.
 */
async function placementFailure(state: NomadDriverState, unit: Unit, sinceIndex: number, stop: AbortSignal): Promise<string | null> {
  // Without the scale's index, older evaluations could not be told from its own.
  if (sinceIndex <= 0) return null;
  const signal = AbortSignal.any([state.closing.signal, stop]);
  let index = 0;
  try {
    while (!state.closed && !stop.aborted) {
      const { body, index: next } = await state.client.get<NomadEvaluation[] | null>(
        `${jobPath(unit.jobId)}/evaluations`,
        {},
        { index, waitMs: BLOCKING_WAIT_MS, signal },
      );
      const failed = failedPlacement(body ?? [], unit.group, sinceIndex);
      if (failed !== null) return failed;
      index = next;
    }
  } catch {
    // A Nomad that went away: the wait's own error says what matters.
  }
  return null;
}
