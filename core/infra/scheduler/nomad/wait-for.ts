/** How the Nomad driver waits for a unit's allocations to reach a state (scale, stop, remove). */
import { SvcError } from '../../../model/errors.js';
import type { NomadDriverState, Unit } from './driver-state.js';

/**
 * Resolves once `done()` holds; rejects with what `failed()` returns, or after `timeoutMs`.
 * Wakes on every change the watcher sees (blocking queries) and on health probes.
 */
export function waitFor(
  state: NomadDriverState,
  unit: Unit,
  timeoutMs: number,
  done: () => boolean,
  failed: () => Promise<SvcError> | undefined,
  timedOut: () => Promise<SvcError>,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const finish = (error?: SvcError | Promise<SvcError>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      unit.watcher.changes.off('change', check);
      if (error === undefined) resolve();
      else void Promise.resolve(error).then(reject, reject);
    };
    const check = () => {
      if (state.closed) return finish(new SvcError('shutting_down', `the Nomad driver was closed while waiting for ${unit.key}`));
      if (done()) return finish();
      const failure = failed();
      if (failure) finish(failure);
    };
    const timer = setTimeout(() => finish(timedOut()), timeoutMs);
    unit.watcher.changes.on('change', check);
    check();
  });
}
