/**
 * A call as the API answers it (and as a completion callback carries it): the record's fields a
 * client reads, its duration, a JSON call's result once it succeeded, and its callback's attempts.
 */
import type { CallRecord, CallStatus, CallView, FinalFrame } from './types.js';

/** `status` is the record's, or `expired` when its outcome is past the retention (the caller knows which). */
export function callView(call: CallRecord, status: CallStatus, frame: FinalFrame | undefined): CallView {
  const durationMs = call.startedAt !== null && call.endedAt !== null ? Date.parse(call.endedAt) - Date.parse(call.startedAt) : null;
  return {
    id: call.id,
    app: call.app,
    function: call.function,
    status,
    attempt: call.attempt,
    maxAttempts: call.maxAttempts,
    createdAt: call.createdAt,
    startedAt: call.startedAt,
    endedAt: call.endedAt,
    durationMs,
    error: call.error,
    ...(call.encoding === 'json' && status === 'succeeded' && frame?.type === 'result' ? { result: frame.json ?? null } : {}),
    callback: call.callback ?? null,
    ...(call.group === undefined ? {} : { group: call.group }),
  };
}
