/**
 * The 503s of a request that cannot get a slot, each saying why. They never
 * carry log lines: a workload URL may be public, and its logs are not.
 */
import { SvcError } from '../../model/errors.js';
import type { LastExit } from './crash-tracker.js';

const LOGS_HINT = 'The workload logs say why (svc serve prints them; the control plane keeps the last lines of each workload).';

export function startingError(waitedMs: number): SvcError {
  const what =
    waitedMs > 0 ? `no container of this workload became ready within ${seconds(waitedMs)} s` : 'this workload is starting a container';
  return new SvcError('starting', `${what}; it is still starting.`, {
    hint: 'Retry after the Retry-After seconds; a cold start imports the app and runs on_start first.',
    headers: { 'Retry-After': '1' },
  });
}

/** A starting container waits for GPUs others hold: `why` is gpu-wait.ts's text. */
export function gpuWaitError(waitedMs: number, why: string): SvcError {
  const waited = waitedMs > 0 ? ` for ${seconds(waitedMs)} s` : '';
  return new SvcError('starting', `this workload's container is ${why}; the request waited${waited} in its queue.`, {
    hint: 'Retry after the Retry-After seconds: a container gives its GPUs back when it stops (after keep_warm idle). svc container list shows who holds them.',
    headers: { 'Retry-After': String(GPU_RETRY_AFTER_S) },
  });
}

/** GPUs come back when a container stops, after its keep_warm: seconds, not a moment. */
const GPU_RETRY_AFTER_S = 5;

export function crashLoopError(failures: number, lastExit: LastExit | null, retryInMs: number): SvcError {
  const last = lastExit ? `; last: ${lastExit.reason}` : '';
  return new SvcError(
    'crash_loop',
    `this workload's container exited ${failures} times in a row${last}. svc keeps retrying with back-off.`,
    {
      hint: LOGS_HINT,
      headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryInMs / 1000))) },
    },
  );
}

export function noCapacityError(waitedMs: number): SvcError {
  return new SvcError('no_capacity', `no slot freed up within ${seconds(waitedMs)} s.`, {
    hint: 'The workload is at max_containers and busy: retry later, or raise max_containers or its concurrency.',
    headers: { 'Retry-After': '1' },
  });
}

export function removedError(): SvcError {
  return new SvcError('no_capacity', 'the deployment was stopped or replaced while this request waited.', {
    hint: 'Retry: a replacing deployment answers at the same URL once it is ready.',
    headers: { 'Retry-After': '1' },
  });
}

function seconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}
