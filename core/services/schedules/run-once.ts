/**
 * One scheduled run of a deployed function: one call with no arguments to a
 * remote run (core/services/runs) of the deployed version's spec and bundle. The
 * scheduler keeps that remote run between ticks (its container stays warm
 * while ticks come, and idles out otherwise) and passes its id back in; a run
 * that ended meanwhile is started again. What the call prints and how it
 * ended are collected for the run's record; a failure to start is a failed
 * run like an exception is.
 */
import { isSvcError } from '../../model/errors.js';
import type { RunManager } from '../runs/runs.js';
import type { AppSpec } from '../../model/workload/types.js';
import type { ScheduledRun, ScheduledRunLogLine } from './types.js';

/** `pickle.dumps({"args": [], "kwargs": {}}, protocol=2)`: the call protocol's empty call. */
const EMPTY_CALL = Buffer.from('80027d71002858040000006172677371015d710258060000006b776172677371037d7104752e', 'hex');

/** The tail of a run's output that its record keeps. */
const MAX_LOG_BYTES = 64 * 1024;

/** How long the run's containers may sit idle if the end below is missed (svc stopping). */
const RUN_IDLE_SECONDS = 60;

export interface RunOnceRequest {
  readonly workspace: string;
  readonly spec: AppSpec;
  readonly bundleSha256: string;
  readonly function: string;
  readonly runId: string;
  readonly signal: AbortSignal;
  /** The remote run a previous tick used, to call again; null starts one. */
  readonly remoteRun: string | null;
  /** End the remote run after the call (a run that overlaps another gets its own). */
  readonly endAfter: boolean;
}

export interface RunOutcome extends Pick<ScheduledRun, 'status' | 'error' | 'logs'> {
  /** The remote run to call on the next tick; null when it ended (or failed to start). */
  readonly remoteRun: string | null;
}

export async function runOnce(runs: Pick<RunManager, 'create' | 'call' | 'end'>, request: RunOnceRequest): Promise<RunOutcome> {
  const logs = new LogTail();
  let runId: string | null = null;
  let keep = !request.endAfter;
  const start = async () => {
    const view = await runs.create({
      spec: request.spec,
      bundleSha256: request.bundleSha256,
      workspace: request.workspace,
      function: request.function,
      principal: null,
      idleTimeoutSeconds: RUN_IDLE_SECONDS,
      // The function's secrets as its deploy has them, inline (`svc.Secret.from_dict`) values too.
      secretScope: { workspace: request.workspace, app: request.spec.name, stage: 'deployed' },
    });
    return view.id;
  };
  const call = (id: string) => runs.call(request.workspace, id, EMPTY_CALL, request.signal, request.runId);
  try {
    runId = request.remoteRun ?? (await start());
    let answer;
    try {
      answer = await call(runId);
    } catch (error) {
      // The kept run idled out (or svc ended it) since the last tick: start another.
      if (request.remoteRun === null || !(isSvcError(error) && error.code === 'not_found')) throw error;
      runId = await start();
      answer = await call(runId);
    }
    let last: Frame | null = null;
    let rest = '';
    for await (const chunk of answer.body) {
      const lines = (rest + (chunk as Buffer).toString('utf8')).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') last = readFrame(line, logs) ?? last;
    }
    if (rest.trim() !== '') last = readFrame(rest, logs) ?? last;
    if (last?.type === 'result') return { status: 'succeeded', error: null, logs: logs.lines, remoteRun: keep ? runId : null };
    if (last?.type === 'error') {
      if (last.traceback) logs.add('stderr', last.traceback);
      return {
        status: 'failed',
        error: { code: last.code ?? null, message: last.exception ?? 'the function raised' },
        logs: logs.lines,
        remoteRun: keep ? runId : null,
      };
    }
    return {
      status: 'failed',
      error: { code: 'worker_crashed', message: 'the call ended without a result' },
      logs: logs.lines,
      remoteRun: keep ? runId : null,
    };
  } catch (error) {
    // svc's own failure (the start failed, svc is stopping): the next tick starts afresh.
    keep = false;
    const code = isSvcError(error) ? error.code : 'internal';
    const message = error instanceof Error ? error.message : String(error);
    logs.add('system', `the run failed: ${code}: ${message}`);
    return { status: 'failed', error: { code, message }, logs: logs.lines, remoteRun: null };
  } finally {
    if (runId !== null && !keep) await runs.end(request.workspace, runId).catch(() => {}); // ended already (svc stopping)
  }
}

interface Frame {
  readonly type: string;
  readonly stream?: string;
  readonly line?: string;
  readonly code?: string;
  readonly exception?: string;
  readonly traceback?: string | null;
}

/** A log frame goes to the tail; the result or error frame is returned. A non-JSON body (an error answer) is a log line. */
function readFrame(text: string, logs: LogTail): Frame | null {
  let frame: Frame;
  try {
    frame = JSON.parse(text) as Frame;
  } catch {
    logs.add('system', text);
    return null;
  }
  if (frame.type === 'log') {
    logs.add(frame.stream === 'stderr' ? 'stderr' : 'stdout', frame.line ?? '');
    return null;
  }
  if (frame.type === 'result' || frame.type === 'error') return frame;
  // An error answer before any frame (a JSON error body): {"error": {code, message}}.
  const body = frame as unknown as { error?: { code?: string; message?: string } };
  if (body.error !== undefined)
    return { type: 'error', code: body.error.code ?? 'internal', exception: `${body.error.code}: ${body.error.message}` };
  return null;
}

/** The last MAX_LOG_BYTES of output, whole lines. */
class LogTail {
  readonly lines: ScheduledRunLogLine[] = [];
  #bytes = 0;

  add(stream: ScheduledRunLogLine['stream'], text: string): void {
    this.lines.push({ time: new Date().toISOString(), stream, text });
    this.#bytes += Buffer.byteLength(text) + 64;
    while (this.#bytes > MAX_LOG_BYTES && this.lines.length > 1) this.#bytes -= Buffer.byteLength(this.lines.shift()!.text) + 64;
  }
}
