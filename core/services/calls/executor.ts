/**
 * The leader's side of spawned calls: it starts queued calls (at most `maxConcurrent` at once, in
 * the order they come), each through a pooled remote run of its code, and records how each ended.
 * When it starts leading it takes over what a previous leader or a crashed svc left: a `running`
 * call goes back to `queued` while the function's attempts allow (at least once in all), else it
 * fails as `call_interrupted`. A call is started once per attempt and ends once: every change of
 * status is a compare-and-set on its record.
 */
import { isSvcError, SvcError } from '../../model/errors.js';
import { MAX_VALUE_BYTES } from '../../model/store/types.js';
import type { RunManager } from '../runs/runs.js';
import type { CallOptions } from '../runs/types.js';
import type { CallRecords } from './call-records.js';
import { errorFrameOf, readFinalFrame } from './final-frame.js';
import type { RunPool } from './run-pool.js';
import { CallLogTail } from './call-log-tail.js';
import type { CallError, CallLogs, CallRecord, DeferredRequest, FinalFrame, StoredResponse } from './types.js';

/** How often the leader removes outcomes past their retention. */
const SWEEP_EVERY_MS = 60_000;

export interface CallExecutorOptions {
  readonly records: CallRecords;
  readonly runs: Pick<RunManager, 'call'>;
  readonly pool: RunPool;
  readonly report: (error: unknown) => void;
  /** Told when a call ends here (its final record), so that requests waiting for its outcome answer at once. */
  readonly ended?: (call: CallRecord) => void;
  /** The completion callbacks' delivery (callback-delivery.ts): it delivers while this replica leads. */
  readonly callbacks?: { lead(): void; stop(): void };
  /** Removes old outcomes (CallService.sweep): run once a minute while leading. */
  readonly sweep?: () => Promise<void>;
  /** Sends a deferred request (`Prefer: respond-async`) to its URL through svc's gateway, and reads the whole answer. */
  readonly sendRequest?: (request: DeferredRequest, signal: AbortSignal) => Promise<StoredResponse>;
  /** Calls running at once, across functions (each function's own capacity still applies). */
  readonly maxConcurrent?: number;
  readonly now?: () => Date;
}

export class CallExecutor {
  readonly #options: CallExecutorOptions;
  readonly #maxConcurrent: number;
  readonly #now: () => Date;
  /** The calls this replica runs now, by `<workspace>/<id>`: cancelling one aborts it. */
  readonly #running = new Map<string, AbortController>();
  readonly #waiting: { readonly workspace: string; readonly id: string }[] = [];
  #leading: AbortSignal | null = null;
  #fillSoon: NodeJS.Immediate | null = null;
  #sweeper: NodeJS.Timeout | undefined;

  constructor(options: CallExecutorOptions) {
    this.#options = options;
    this.#maxConcurrent = options.maxConcurrent ?? 64;
    this.#now = options.now ?? (() => new Date());
  }

  /** Starts running calls, first the ones left queued or running before; stops when `signal` aborts. */
  lead(signal: AbortSignal): void {
    this.#leading = signal;
    signal.addEventListener('abort', () => this.#stopLeading(), { once: true });
    this.#recover().catch(this.#options.report);
    this.#options.callbacks?.lead();
    const sweep = this.#options.sweep;
    if (sweep !== undefined) {
      this.#sweeper = setInterval(() => void sweep().catch(this.#options.report), SWEEP_EVERY_MS);
      this.#sweeper.unref();
    }
  }

  /** A call was recorded as queued: it runs as soon as there is room. */
  wake(workspace: string, id: string): void {
    if (this.#leading === null || this.#leading.aborted) return; // the next leader's recovery finds it
    this.#waiting.push({ workspace, id });
    // Started after the current I/O is handled: a spawn's 202 leaves before its call's claim and
    // dispatch take the event loop (and the spawns of one turn start together).
    if (this.#fillSoon === null) {
      this.#fillSoon = setImmediate(() => {
        this.#fillSoon = null;
        this.#fill();
      });
    }
  }

  /** Aborts the call if this replica runs it; the canceller records `cancelled`. */
  abort(workspace: string, id: string): void {
    this.#running.get(`${workspace}/${id}`)?.abort(new SvcError('call_cancelled', `the call ${id} was cancelled`));
  }

  async close(): Promise<void> {
    this.#stopLeading();
    await this.#options.pool.close();
  }

  #stopLeading(): void {
    this.#leading = null;
    clearInterval(this.#sweeper);
    if (this.#fillSoon !== null) clearImmediate(this.#fillSoon);
    this.#fillSoon = null;
    this.#options.callbacks?.stop();
    this.#waiting.length = 0;
    // Their records stay `running`: the next leader (or this svc, restarted) runs them again.
    for (const controller of this.#running.values()) controller.abort(new SvcError('shutting_down', 'svc stopped leading'));
  }

  async #recover(): Promise<void> {
    const calls = await this.#options.records.all();
    calls.sort((a, b) => (a.value.createdAt < b.value.createdAt ? -1 : 1));
    for (const { value: call, modifyIndex } of calls) {
      if (call.status === 'running' && !this.#running.has(`${call.workspace}/${call.id}`)) {
        const interrupted = call.attempt >= call.maxAttempts;
        const next: CallRecord = interrupted
          ? { ...call, status: 'failed', endedAt: this.#now().toISOString(), error: interruption(call) }
          : { ...call, status: 'queued' };
        if (!(await this.#options.records.update(next, modifyIndex))) continue;
        if (interrupted) this.#options.ended?.(next);
        else this.wake(call.workspace, call.id);
      } else if (call.status === 'queued') {
        this.wake(call.workspace, call.id);
      }
    }
  }

  #fill(): void {
    while (this.#running.size < this.#maxConcurrent && this.#waiting.length > 0) {
      const { workspace, id } = this.#waiting.shift()!;
      const key = `${workspace}/${id}`;
      if (this.#running.has(key)) continue;
      const controller = new AbortController();
      this.#running.set(key, controller);
      this.#run(workspace, id, controller.signal)
        // A call given up (cancelled, or svc stopped leading) is not a failure of svc's.
        .catch((error: unknown) => controller.signal.aborted || this.#options.report(error))
        .finally(() => {
          this.#running.delete(key);
          this.#fill();
        });
    }
  }

  /** One attempt of one call: claim it, run it, record its outcome (unless it was cancelled or svc stopped leading). */
  async #run(workspace: string, id: string, signal: AbortSignal): Promise<void> {
    const { records } = this.#options;
    const entry = await records.get(workspace, id);
    if (entry === null || entry.value.status !== 'queued') return;
    const started: CallRecord = {
      ...entry.value,
      status: 'running',
      attempt: entry.value.attempt + 1,
      startedAt: entry.value.startedAt ?? this.#now().toISOString(),
    };
    if (!(await records.update(started, entry.modifyIndex))) return; // cancelled meanwhile
    const input = await records.input(workspace, id);
    const frame =
      input === null
        ? errorFrameOf(new SvcError('state_corrupt', `the input of ${id} is missing`))
        : await this.#attempt(started, input, signal);
    if (signal.aborted) return; // cancelled (its canceller wrote that), or svc stopped leading (the next leader runs it again)
    const current = await records.get(workspace, id);
    // Ours to end while it is still this attempt's; the outcome is kept either way (a cancel came first: as it always was).
    const ending =
      current !== null && current.value.status === 'running' && current.value.attempt === started.attempt
        ? {
            record: {
              ...current.value,
              status: frame.type === 'result' ? ('succeeded' as const) : ('failed' as const),
              endedAt: this.#now().toISOString(),
              error: frame.type === 'result' ? null : errorOf(frame),
            },
            modifyIndex: current.modifyIndex,
          }
        : null;
    if ((await records.end(workspace, id, fitting(frame), ending)) && ending !== null) this.#options.ended?.(ending.record);
  }

  /**
   * The call's final frame; svc's own failures (a run that cannot start) become error frames. A
   * spawned call waits for a container as long as it takes: never `queue_full` nor the queue
   * time-out (the executor's `maxConcurrent` bounds how many wait).
   */
  async #attempt(call: CallRecord, input: Buffer, signal: AbortSignal): Promise<FinalFrame> {
    if (call.encoding === 'request') return this.#send(JSON.parse(input.toString('utf8')) as DeferredRequest, signal);
    const { records, report } = this.#options;
    const write = (logs: CallLogs) => records.putLogs(call.workspace, call.id, logs);
    const tail = new CallLogTail(await records.logs(call.workspace, call.id), call.attempt, write, report);
    try {
      return await this.#callRun(call, input, signal, (stream, line) => tail.add(stream, line));
    } finally {
      await tail.flush();
    }
  }

  /** The attempt's final frame through a pooled run, its printed lines to `onLog`. */
  async #callRun(
    call: CallRecord,
    input: Buffer,
    signal: AbortSignal,
    onLog: (stream: 'stdout' | 'stderr', line: string) => void,
  ): Promise<FinalFrame> {
    const options: CallOptions = {
      maxPending: Number.MAX_SAFE_INTEGER,
      waitTimeout: false,
      ...(call.encoding === 'json' ? { contentType: 'application/json' } : {}),
    };
    for (let restarted = false; ; restarted = true) {
      let runId: string | null = null;
      try {
        runId = await this.#options.pool.runFor(call);
        return await readFinalFrame(await this.#options.runs.call(call.workspace, runId, input, signal, call.id, options), onLog);
      } catch (error) {
        if (signal.aborted || !isSvcError(error)) throw signal.aborted ? signal.reason : error;
        // The pooled run idled out or was ended: start another, once.
        if (error.code !== 'not_found' || runId === null || restarted) return errorFrameOf(error);
        this.#options.pool.forget(runId);
      }
    }
  }

  /** One attempt of a deferred request: svc's own failure to send it (no gateway, a broken connection) is an error frame. */
  async #send(request: DeferredRequest, signal: AbortSignal): Promise<FinalFrame> {
    const send = this.#options.sendRequest;
    if (send === undefined) return errorFrameOf(new SvcError('internal', 'this server sends no deferred requests'));
    try {
      return responseFrame(await send(request, signal));
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      return errorFrameOf(
        isSvcError(error) ? error : new SvcError('upstream_unreachable', `svc could not send the request: ${(error as Error).message}`),
      );
    }
  }
}

/** A deferred request's answer as its final frame: a 5xx (the handler raised, or svc could not serve it) ends the call `failed`. */
function responseFrame(response: StoredResponse): FinalFrame {
  if (response.status < 500) return { type: 'result', response };
  // svc's own 5xx (no_capacity, worker_crashed, …) carries its code; a handler's own has none.
  const code = svcErrorCode(Buffer.from(response.body, 'base64').toString('utf8'));
  const exception = code === null ? `the workload answered ${response.status}` : `svc answered ${response.status} ${code}`;
  return { type: 'error', ...(code === null ? {} : { code }), exception, pickle: null, traceback: null, response };
}

function svcErrorCode(body: string): string | null {
  try {
    const code: unknown = (JSON.parse(body) as { error?: { code?: unknown } } | null)?.error?.code;
    return typeof code === 'string' ? code : null;
  } catch {
    return null;
  }
}

/** The frame as it can be kept: one over the state store's value limit becomes an error saying so. */
function fitting(frame: FinalFrame): FinalFrame {
  const bytes = Buffer.byteLength(JSON.stringify(frame));
  if (bytes <= MAX_VALUE_BYTES - 1024) return frame;
  const what = frame.type === 'result' ? 'result' : 'exception';
  return errorFrameOf(
    new SvcError(
      'payload_too_large',
      `the call's ${what} is ${bytes} bytes once encoded; a spawned call keeps at most ${MAX_VALUE_BYTES - 1024} bytes of outcome. Return less (a name or a path of the data, not the data).`,
    ),
  );
}

function errorOf(frame: FinalFrame): CallError {
  return { code: frame.code ?? null, message: frame.exception ?? 'the function raised' };
}

function interruption(call: CallRecord): CallError {
  return {
    code: 'call_interrupted',
    message: `svc stopped (or its leader changed) while attempt ${call.attempt} of ${call.maxAttempts} ran, and the function's retries allow no more`,
  };
}
