/**
 * Spawned calls as the API sees them: spawn (recorded before the answer, then run by the leader's
 * CallExecutor), read, wait for the outcome, cancel; and the clean-up of old outcomes. A call of
 * another workspace is `not_found`, in the same words as one that never was.
 */
import type { WorkMetrics } from '../../infra/metrics/work-metrics.js';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { SvcError } from '../../model/errors.js';
import type { Principal } from '../../model/principal.js';
import { MAX_VALUE_BYTES } from '../../model/store/types.js';
import type { AppSpec, Workload } from '../../model/workload/types.js';
import { functionOf } from '../runs/runs.js';
import type { CallRecords } from './call-records.js';
import type { CallbackGuard } from './callback-url.js';
import { callView } from './call-view.js';
import {
  type CallEncoding,
  type CallGroupRecord,
  type CallLogs,
  type CallRecord,
  type CallStatus,
  type CallTarget,
  type CallView,
  type DeferredRequest,
  ENDED,
  type FinalFrame,
  type GroupPlace,
} from './types.js';
import { memberId } from './group-records.js';

/** How long the outcome of an ended call is kept, unless the operator says otherwise. */
export const DEFAULT_CALL_RESULT_TTL_SECONDS = 24 * 60 * 60;
/** The longest one outcome request may wait for a call to end (the client asks again after). */
export const MAX_OUTCOME_WAIT_SECONDS = 60;

export interface CallServiceOptions {
  readonly records: CallRecords;
  /** The leader's executor: told of each new call, and of cancelled ones it may be running. */
  readonly executor: { wake(workspace: string, id: string): void; abort(workspace: string, id: string): void };
  readonly resultTtlSeconds?: number;
  /** Completion callbacks: their URLs' check, the workspace's signing secret (made on first use), the leader's delivery. */
  readonly callbacks?: {
    readonly guard: Pick<CallbackGuard, 'check'>;
    readonly secretOf: (workspace: string) => Promise<unknown>;
    due(workspace: string, id: string): void;
  };
  /** Counts ended calls and their run time (`/metrics`). */
  readonly meter?: Pick<WorkMetrics, 'callEnded'>;
  /** Why a call this replica runs waits for a container (RunManager.waitReason: a GPU), or null. */
  readonly waitReason?: (workspace: string, id: string) => string | null;
  readonly now?: () => Date;
}

export interface SpawnRequest {
  readonly workspace: string;
  readonly principal: Principal | null;
  /** The app's spec as it runs (deployed or uploaded): the function is checked against it. */
  readonly spec: AppSpec;
  readonly function: string;
  readonly target: CallTarget;
  readonly encoding: CallEncoding;
  readonly input: Buffer;
  /** Where the outcome is POSTed once the call ended, as `checkCallback` gave it; absent: the function's `callback_url`, else nowhere. */
  readonly callbackUrl?: string | null;
}

/** A request to a workload URL to send later (`Prefer: respond-async`), as the gateway found it. */
export interface DeferRequest {
  readonly workspace: string;
  readonly principal: Principal | null;
  readonly app: string;
  /** The stage whose URL it went to: `deployed`, or a preview's. */
  readonly stage: string;
  readonly workload: Workload;
  readonly request: DeferredRequest;
  /** As `checkCallback` gave it; absent: the workload's `callback_url`, else nowhere. */
  readonly callbackUrl?: string | null;
}

/** Which calls `list` gives: those of one status (all without it), the newest `limit`. */
export interface CallFilter {
  readonly status?: CallStatus;
  readonly limit: number;
}

export type Outcome =
  | { readonly ended: true; readonly call: CallView; readonly frame: FinalFrame }
  | { readonly ended: false; readonly call: CallView };

export class CallService {
  readonly #options: CallServiceOptions;
  readonly #ttlMs: number;
  readonly #now: () => Date;
  /** `<workspace>/<id>` is emitted when that call ends here (the executor, a cancel). */
  readonly #endings = new EventEmitter();

  constructor(options: CallServiceOptions) {
    this.#options = options;
    this.#ttlMs = (options.resultTtlSeconds ?? DEFAULT_CALL_RESULT_TTL_SECONDS) * 1000;
    this.#now = options.now ?? (() => new Date());
    this.#endings.setMaxListeners(0);
  }

  async spawn(request: SpawnRequest): Promise<CallView> {
    const workload = functionOf(request.spec, request.function);
    checkInputSize(request.input, request.encoding);
    const callbackUrl = await this.#callbackOf(request.workspace, workload, request.callbackUrl);
    return this.#create(
      { ...request, callbackUrl },
      {
        app: request.spec.name,
        function: request.function,
        maxAttempts: maxAttemptsOf(workload),
        target: request.target,
        encoding: request.encoding,
      },
    );
  }

  /**
   * Records input `index` of a call group, whose record has reserved that index: a pickled call
   * like a spawn's, with the group's attempts and no callback of its own (as a map's inputs).
   */
  async spawnMember(group: CallGroupRecord, index: number, input: Buffer): Promise<void> {
    checkInputSize(input, 'pickle', `input ${index}`);
    await this.#create(
      { workspace: group.workspace, principal: null, input, callbackUrl: null },
      {
        app: group.app,
        function: group.function,
        maxAttempts: group.maxAttempts,
        target: group.target,
        encoding: 'pickle',
        id: memberId(group.id, index),
        group: { id: group.id, index },
        createdBy: group.createdBy,
      },
    );
  }

  /**
   * Records a request to a workload URL sent with `Prefer: respond-async` (its access already
   * checked by the gateway), for the leader to send to that URL; `payload_too_large` when it
   * cannot be kept.
   */
  async defer(request: DeferRequest): Promise<CallView> {
    const input = Buffer.from(JSON.stringify(request.request));
    if (input.length > MAX_VALUE_BYTES) {
      throw new SvcError(
        'payload_too_large',
        `the request is ${input.length} bytes as svc keeps it (its body in base64); a request sent with Prefer: respond-async may take at most ${MAX_VALUE_BYTES} bytes (512 KiB).`,
        { hint: 'Send a smaller body (a name or a URL of large data), or send the request without Prefer: respond-async.' },
      );
    }
    const callbackUrl = await this.#callbackOf(request.workspace, request.workload, request.callbackUrl);
    return this.#create(
      { ...request, input, callbackUrl },
      {
        app: request.app,
        function: request.workload.name,
        maxAttempts: maxAttemptsOf(request.workload),
        target: { kind: 'url', stage: request.stage },
        encoding: 'request',
      },
    );
  }

  /** The call's record and input in the state store before the answer; then the leader is told. */
  async #create(
    request: Pick<SpawnRequest, 'workspace' | 'principal' | 'input' | 'callbackUrl'>,
    what: {
      app: string;
      function: string;
      maxAttempts: number;
      target: CallTarget;
      encoding: CallEncoding;
      /** A group's input: its id and place, and who made the group. */
      id?: string;
      group?: GroupPlace;
      createdBy?: string | null;
    },
  ): Promise<CallView> {
    const record: CallRecord = {
      id: what.id ?? `call-${randomBytes(10).toString('hex')}`,
      workspace: request.workspace,
      app: what.app,
      function: what.function,
      target: what.target,
      encoding: what.encoding,
      status: 'queued',
      attempt: 0,
      maxAttempts: what.maxAttempts,
      createdAt: this.#now().toISOString(),
      startedAt: null,
      endedAt: null,
      error: null,
      createdBy: what.createdBy !== undefined ? what.createdBy : (request.principal?.tokenId ?? request.principal?.subject ?? null),
      callback: request.callbackUrl ? { url: request.callbackUrl, attempts: [], delivered: false } : null,
      ...(what.group === undefined ? {} : { group: what.group }),
    };
    await this.#options.records.create(record, request.input);
    this.#options.executor.wake(record.workspace, record.id);
    return this.#view(record, undefined);
  }

  /**
   * A callback URL as a spawn takes it (`bad_request` saying why not: its form, or an address
   * refused against server-side request forgery), once the workspace has its signing secret (a
   * server that cannot seal one refuses here rather than at the first delivery).
   */
  async checkCallback(workspace: string, raw: unknown, source: string): Promise<string> {
    const callbacks = this.#options.callbacks;
    if (callbacks === undefined) throw new SvcError('bad_request', 'this server sends no completion callbacks.');
    const url = await callbacks.guard.check(raw, source);
    await callbacks.secretOf(workspace);
    return url;
  }

  /**
   * Where a call's outcome goes: the URL the call was given, else its workload's `callback_url`,
   * checked now as a given one is (the deploy checked its form only: where a name points is
   * known when a call is made, and may have changed since).
   */
  async #callbackOf(workspace: string, workload: Workload, given: string | null | undefined): Promise<string | null> {
    if (given) return given;
    if (workload.callbackUrl === undefined) return null;
    return this.checkCallback(workspace, workload.callbackUrl, `the callback_url option of ${workload.kind} ${workload.name}`);
  }

  /** The call's view without its result, or null when there is no such call (a group's input read by its index). */
  async find(workspace: string, id: string): Promise<CallView | null> {
    const entry = await this.#options.records.get(workspace, id);
    return entry === null ? null : this.#view(entry.value, undefined);
  }

  async get(workspace: string, id: string): Promise<CallView> {
    const record = await this.#record(workspace, id);
    const frame = record.encoding === 'json' && record.status === 'succeeded' ? await this.#options.records.outcome(workspace, id) : null;
    return this.#view(record, frame ?? undefined);
  }

  /**
   * The calls of one app in a workspace, newest first, without their results (`GET /calls/:id`
   * has a JSON call's). Reads the workspace's records only; an expired call is listed as such.
   */
  async list(workspace: string, app: string, filter: CallFilter): Promise<CallView[]> {
    const views = (await this.#options.records.ofWorkspace(workspace))
      .filter(({ value: call }) => call.app === app)
      .map(({ value: call }) => this.#view(call, undefined))
      .filter((call) => filter.status === undefined || call.status === filter.status);
    views.sort((a, b) => (a.createdAt === b.createdAt ? b.id.localeCompare(a.id) : b.createdAt.localeCompare(a.createdAt)));
    return views.slice(0, filter.limit);
  }

  /** The inputs of a call group recorded so far, by index (reads the workspace's records only). */
  async ofGroup(workspace: string, groupId: string): Promise<CallView[]> {
    const views = (await this.#options.records.ofWorkspace(workspace))
      .filter(({ value: call }) => call.group?.id === groupId)
      .map(({ value: call }) => this.#view(call, undefined));
    return views.sort((a, b) => a.group!.index - b.group!.index);
  }

  /**
   * The final frame once the call ended, waiting up to `waitSeconds` for it; `call_cancelled`
   * or `call_expired` when it has none to give.
   */
  async outcome(workspace: string, id: string, waitSeconds: number, signal: AbortSignal): Promise<Outcome> {
    const deadline = Date.now() + Math.min(waitSeconds, MAX_OUTCOME_WAIT_SECONDS) * 1000;
    for (;;) {
      const record = await this.#record(workspace, id);
      const status = this.#status(record);
      if (status === 'cancelled') throw new SvcError('call_cancelled', `the call ${id} was cancelled before it ended: it has no result.`);
      if (status === 'expired') throw expiredError(id, this.#ttlMs);
      if (status === 'succeeded' || status === 'failed') {
        const frame = await this.#options.records.outcome(workspace, id);
        if (frame === null) throw expiredError(id, this.#ttlMs);
        return { ended: true, call: this.#view(record, frame), frame };
      }
      const left = deadline - Date.now();
      if (left <= 0 || signal.aborted) return { ended: false, call: this.#view(record, undefined) };
      await this.#ending(`${workspace}/${id}`, Math.min(left, 1000), signal);
    }
  }

  /** What the call printed so far, every attempt (empty before its first line); `call_expired` once its outcome is gone. */
  async logs(workspace: string, id: string): Promise<CallLogs> {
    const record = await this.#record(workspace, id);
    if (this.#status(record) === 'expired') throw expiredError(id, this.#ttlMs);
    return (await this.#options.records.logs(workspace, id)) ?? { lines: [], dropped: 0 };
  }

  /** Cancels a call that has not ended; `conflict` naming its status when it has. */
  async cancel(workspace: string, id: string): Promise<void> {
    for (;;) {
      const entry = await this.#options.records.get(workspace, id);
      if (entry === null) throw noCall(id);
      const status = this.#status(entry.value);
      if (ENDED.has(status)) {
        throw new SvcError('conflict', `the call ${id} has ended already (${status}): there is nothing to cancel.`, {
          details: { status },
        });
      }
      const cancelled: CallRecord = { ...entry.value, status: 'cancelled', endedAt: this.#now().toISOString() };
      if (await this.#options.records.update(cancelled, entry.modifyIndex)) {
        this.#options.executor.abort(workspace, id);
        this.ended(cancelled);
        return;
      }
    }
  }

  /** Told by the executor (and cancel) that a call ended: waiting outcome requests answer at once, its callback goes, /metrics counts it. */
  ended(call: CallRecord): void {
    this.#endings.emit(`${call.workspace}/${call.id}`);
    // Only a call with a callback has one to deliver (the delivery reads the record again).
    if (call.callback) this.#options.callbacks?.due(call.workspace, call.id);
    const ran = call.startedAt !== null && call.endedAt !== null ? (Date.parse(call.endedAt) - Date.parse(call.startedAt)) / 1000 : null;
    this.#options.meter?.callEnded({ workspace: call.workspace, app: call.app, function: call.function }, call.status, ran);
  }

  /** Marks outcomes older than the TTL expired (dropping them), and removes records twice that old. */
  async sweep(): Promise<void> {
    const now = this.#now().getTime();
    for (const { value: call, modifyIndex } of await this.#options.records.all()) {
      if (call.endedAt === null) continue;
      const age = now - Date.parse(call.endedAt);
      if (age > 2 * this.#ttlMs) await this.#options.records.remove(call.workspace, call.id);
      else if (age > this.#ttlMs && call.status !== 'expired') {
        if (await this.#options.records.update({ ...call, status: 'expired' }, modifyIndex))
          await this.#options.records.dropPayloads(call.workspace, call.id);
      }
    }
  }

  async #record(workspace: string, id: string): Promise<CallRecord> {
    const entry = await this.#options.records.get(workspace, id);
    if (entry === null) throw noCall(id);
    return entry.value;
  }

  /** A call whose outcome is past the TTL is expired, even before the sweep marks it. */
  #status(call: CallRecord): CallRecord['status'] {
    if (call.endedAt !== null && call.status !== 'cancelled' && this.#now().getTime() - Date.parse(call.endedAt) > this.#ttlMs)
      return 'expired';
    return call.status;
  }

  #view(call: CallRecord, frame: FinalFrame | undefined): CallView {
    const view = callView(call, this.#status(call), frame);
    if (view.status !== 'running') return view;
    const waiting = this.#options.waitReason?.(call.workspace, call.id) ?? null;
    return waiting === null ? view : { ...view, waiting };
  }

  #ending(key: string, ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#endings.off(key, done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#endings.once(key, done);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}

/** The one answer for an unknown call id and another workspace's (the same words). */
/** The most attempts a call of `workload` gets: its retries, plus one. */
export function maxAttemptsOf(workload: Workload): number {
  return (workload.retries?.maxRetries ?? 0) + 1;
}

/** `payload_too_large` for arguments the state store cannot keep (`what`: which input, for a group's). */
function checkInputSize(input: Buffer, encoding: CallEncoding, what = "the call's arguments"): void {
  if (input.length <= MAX_VALUE_BYTES) return;
  throw new SvcError(
    'payload_too_large',
    `${what} ${what.startsWith('input') ? 'is' : 'are'} ${input.length} bytes ${encoding === 'json' ? 'of JSON' : 'pickled'}; a spawned call takes at most ${MAX_VALUE_BYTES} bytes (512 KiB).`,
    { hint: 'Pass a name or a URL of large data (a file the function can read) rather than the data itself.' },
  );
}

export function noCall(id: string): SvcError {
  return new SvcError('not_found', `there is no call ${id} in this workspace.`, {
    hint: 'Call ids come from spawn() (FunctionCall.object_id) or POST …/calls; an expired call is removed after twice the result retention.',
  });
}

function expiredError(id: string, ttlMs: number): SvcError {
  return new SvcError('call_expired', `the call ${id} ended more than ${ttlMs / 1000} s ago: its outcome is no longer kept.`, {
    hint: 'Read outcomes within the retention (callResultTtlSeconds), or spawn the call again.',
  });
}
