/**
 * A call whose container could not be reached at all (its socket gone: ENOENT; nobody listening:
 * ECONNREFUSED) was never sent, so sending it again is safe, even for a call that is not
 * idempotent. It happens in the moment between a worker's exit (a call past its time-out ends the
 * worker) and its replacement taking its place: the next call waits a moment and goes again,
 * through admission, instead of failing. A body that is a stream is not sent again (it may have
 * been read); its caller gets the error.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isSvcError } from '../../model/errors.js';

const NOT_SENT = new Set(['ENOENT', 'ECONNREFUSED']);
/** Tries in all, and the wait before each try after the first. */
const TRIES = 4;
const WAIT_MS = 100;

export async function retryUnsent<T>(send: () => Promise<T>, resendable: boolean, signal: AbortSignal): Promise<T> {
  for (let tried = 1; ; tried++) {
    try {
      return await send();
    } catch (error) {
      if (!resendable || tried >= TRIES || signal.aborted || !neverSent(error)) throw error;
      await sleep(WAIT_MS, undefined, { signal }).catch(() => {});
      if (signal.aborted) throw error;
    }
  }
}

function neverSent(error: unknown): boolean {
  if (!isSvcError(error) || error.code !== 'upstream_unreachable') return false;
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && NOT_SENT.has(code);
}
