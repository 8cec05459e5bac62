/**
 * Spawned calls (`f.spawn()`, `POST /api/v1/calls`, `POST /api/v1/apps/:app/functions/:fn/calls`):
 * one call of a function that outlives its caller. Its record is in the state store before the
 * spawn answers; the leader runs it through a remote run and keeps its outcome for a while.
 */

import type { ClassParameterValues } from '../../model/workload/class-parameters.js';
import type { StoredResponse } from '../../traffic/gateway/types.js';

/** What a call id looks like (calls.ts makes them): `call-` and 20 hex digits. */
export const CALL_ID_SOURCE = 'call-[0-9a-f]{20}';

/**
 * - `queued`: recorded, waiting for the leader to start it;
 * - `running`: an attempt runs (a restart of svc or a lost container sends it back to `queued`
 *   while the function's retries allow, at least once in all);
 * - `succeeded` / `failed`: it returned / it raised, or svc could not run it (`error` says which);
 * - `cancelled`: cancelled before it ended;
 * - `expired`: it ended longer ago than the results are kept; its outcome is gone.
 */
export const CALL_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled', 'expired'] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

export const ENDED: ReadonlySet<CallStatus> = new Set(['succeeded', 'failed', 'cancelled', 'expired']);

/**
 * The code a call runs: the deployed version of an app's function, code uploaded with the call's
 * manifest, or (a request sent with `Prefer: respond-async`) whatever serves the request's URL
 * when svc sends it. A call of an `@app.cls` class holds its parameters' values (every one), which
 * choose the run it goes to.
 */
export type CallTarget =
  | { readonly kind: 'deployed'; readonly app: string; readonly parameters?: ClassParameterValues }
  | { readonly kind: 'uploaded'; readonly manifest: unknown; readonly bundle: string; readonly parameters?: ClassParameterValues }
  | { readonly kind: 'url'; readonly stage: string };

/**
 * How the arguments came and the result goes: `pickle` (the Python client: the container's pickled
 * call protocol), `json` (the HTTP API: a JSON object of arguments, the result as JSON) or
 * `request` (an HTTP request to an endpoint's URL, kept as a `DeferredRequest`; the outcome is
 * the endpoint's answer, a `StoredResponse`).
 */
export type CallEncoding = 'pickle' | 'json' | 'request';

export type { DeferredRequest, StoredResponse } from '../../traffic/gateway/types.js';

export interface CallError {
  /** svc's error code (`worker_crashed`, `timeout`, …), or null when the function raised. */
  readonly code: string | null;
  /** `ValueError: bad input` for an exception; svc's message otherwise. */
  readonly message: string;
}

/** What the state store keeps of a call (its input and outcome are kept beside it). */
export interface CallRecord {
  readonly id: string;
  readonly workspace: string;
  readonly app: string;
  readonly function: string;
  readonly target: CallTarget;
  readonly encoding: CallEncoding;
  readonly status: CallStatus;
  /** Attempts started so far. */
  readonly attempt: number;
  /** The most attempts the function's retries allow (retries + 1). */
  readonly maxAttempts: number;
  readonly createdAt: string;
  readonly startedAt: string | null;
  readonly endedAt: string | null;
  readonly error: CallError | null;
  /** Who spawned it: a token's or member's id, null for svc itself. */
  readonly createdBy: string | null;
  /** Where svc POSTs the outcome once the call ended; absent or null: nowhere (records from before callbacks have none). */
  readonly callback?: CallbackState | null;
  /** The call group (`spawn_map`) it is an input of, and its place there; absent for a call of its own. */
  readonly group?: GroupPlace;
}

/** A call's place in its group: the group's id and the input's index (from 0, in the order sent). */
export interface GroupPlace {
  readonly id: string;
  readonly index: number;
}

/** One POST of a completion callback: the receiver's status, or why there was none. */
export interface CallbackAttempt {
  readonly at: string;
  readonly status?: number;
  readonly error?: string;
}

/** A call's completion callback: where it goes, every attempt so far, and whether a receiver took it (2xx). */
export interface CallbackState {
  readonly url: string;
  readonly attempts: readonly CallbackAttempt[];
  readonly delivered: boolean;
}

/** A call as the API answers it: the record's public fields, and what is derived from them. */
export type CallView = Pick<
  CallRecord,
  'id' | 'app' | 'function' | 'status' | 'attempt' | 'maxAttempts' | 'createdAt' | 'startedAt' | 'endedAt' | 'error'
> & {
  /** From the first start to the end; null until it ended. */
  readonly durationMs: number | null;
  /** A JSON call's return value once it succeeded; absent otherwise. */
  readonly result?: unknown;
  /** Its completion callback and the attempts to deliver it; null without one. */
  readonly callback: CallbackState | null;
  /** Present for an input of a call group (`spawn_map`). */
  readonly group?: GroupPlace;
  /** Why it waits for a container, while its attempt waits for one that waits for a GPU (which models, who holds them, its place); absent otherwise. */
  readonly waiting?: string;
};

/**
 * The last frame of a call that ended: `result` (with `pickle`, `json` or, for a deferred
 * request, the workload's `response`) or `error`, as the container wrote it. A deferred request
 * whose answer is a 5xx ended `error` and keeps that answer in `response` too.
 */
export interface FinalFrame {
  readonly type: 'result' | 'error';
  readonly pickle?: string | null;
  readonly json?: unknown;
  readonly response?: StoredResponse;
  readonly code?: string;
  readonly exception?: string;
  readonly traceback?: string | null;
}

/** One line a call printed, and the attempt that printed it. */
export interface CallLogLine {
  readonly attempt: number;
  readonly stream: 'stdout' | 'stderr';
  readonly line: string;
}

/** What a call printed, all attempts one after the other: its last lines, within a bound; `dropped` counts those left out before them. */
export interface CallLogs {
  readonly lines: readonly CallLogLine[];
  readonly dropped: number;
}

/** What a call group id looks like (call-groups.ts makes them): `group-` and 20 hex digits. */
export const GROUP_ID_SOURCE = 'group-[0-9a-f]{20}';

/**
 * A call group (`f.spawn_map(...)`, `POST /api/v1/call-groups`): many inputs of one function, each
 * a call of its own (durable, retried, cancelled like any spawned call), sent in batches and read
 * by their index. Its record counts the inputs recorded so far; `closed` once the last batch came.
 */
export interface CallGroupRecord {
  readonly id: string;
  readonly workspace: string;
  readonly app: string;
  readonly function: string;
  readonly target: CallTarget;
  /** Every input's attempts (the function's retries + 1), fixed when the group was made. */
  readonly maxAttempts: number;
  readonly inputs: number;
  readonly closed: boolean;
  readonly createdAt: string;
  readonly createdBy: string | null;
}

/**
 * A group's status, from its inputs': `running` while one is queued or running (or more may
 * come), then `failed` when one failed, `cancelled` when one was cancelled, `expired` when all
 * outcomes are gone, else `succeeded`.
 */
export type CallGroupStatus = 'running' | 'succeeded' | 'failed' | 'cancelled' | 'expired';

/** A call group as a batch's answer names it: no counts, which would mean reading every input at every batch. */
export type CallGroupSummary = Pick<CallGroupRecord, 'id' | 'app' | 'function' | 'inputs' | 'closed' | 'createdAt'>;

/** A call group as the API answers it. */
export type CallGroupView = CallGroupSummary & {
  readonly status: CallGroupStatus;
  /** Its inputs by status (every status listed, zeros included). */
  readonly counts: Readonly<Record<CallStatus, number>>;
};
