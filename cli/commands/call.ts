/**
 * `svc call get | cancel | wait | logs <id>`: one spawned call (`/api/v1/calls/:id`). `wait` holds
 * `GET …/outcome` with `Prefer: wait=…` until the call ends: exit 0 when it succeeded (a JSON
 * call's result on stdout), 1 when it failed, was cancelled or expired, 2 when --timeout passed.
 */
import { SvcError } from '../../core/model/errors.js';
import type { CallLogs, CallView, FinalFrame } from '../../core/services/calls/types.js';
import { API_PREFIX } from '../api-client.js';
import { connect, type CommandContext } from '../context.js';
import { parseDuration } from '../durations.js';
import { colorStatus } from '../table.js';
import { shortTime } from '../time.js';
import { callError } from './app-calls.js';
import type { JsonFlag } from './app.js';

export interface CallWaitFlags {
  /** Seconds (`90`) or a duration (`5m`); without it, wait until the call ends or Ctrl-C. */
  readonly timeout?: string;
}

/** The longest the server holds one outcome request (MAX_OUTCOME_WAIT_SECONDS): the CLI asks again after. */
const WAIT_PER_REQUEST_SECONDS = 60;

const callPath = (id: string) => `${API_PREFIX}/calls/${encodeURIComponent(id)}`;

export async function callGet(context: CommandContext, id: string, flags: JsonFlag = {}): Promise<void> {
  const { client } = await connect(context);
  const { out } = context;
  const { call } = await client.get<{ call: CallView }>(callPath(id));
  if (flags.json) {
    out.result(JSON.stringify({ call }, null, 2));
    return;
  }
  const none = out.color.dim('-');
  const fields: [string, string][] = [
    ['call', call.id],
    ['app', call.app],
    ['function', call.function],
    ['status', colorStatus(call.status, out.color)],
    ['attempt', `${call.attempt} of ${call.maxAttempts}`],
    ['created', shortTime(call.createdAt)],
    ['started', call.startedAt === null ? none : shortTime(call.startedAt)],
    ['ended', call.endedAt === null ? none : shortTime(call.endedAt)],
    ['duration', call.durationMs === null ? none : `${(call.durationMs / 1000).toFixed(1)}s`],
    ['error', call.error === null ? none : callError(call)],
  ];
  if ('result' in call) fields.push(['result', JSON.stringify(call.result)]);
  for (const [name, value] of fields) out.result(`${name.padEnd(9)} ${value}`);
}

/** Its lines as it printed them: stdout's on stdout, stderr's on stderr; each attempt after the first is announced. */
export async function callLogs(context: CommandContext, id: string, flags: JsonFlag = {}): Promise<void> {
  const { client } = await connect(context);
  const { out } = context;
  const logs = await client.get<CallLogs>(`${callPath(id)}/logs`);
  if (flags.json) {
    out.result(JSON.stringify(logs, null, 2));
    return;
  }
  if (logs.dropped > 0)
    out.warn(`${logs.dropped} earlier line${logs.dropped === 1 ? ' was' : 's were'} left out: svc keeps a call's last 256 KiB`);
  let attempt = logs.lines[0]?.attempt;
  for (const { attempt: at, stream, line } of logs.lines) {
    if (at !== attempt) out.step(`attempt ${at}`);
    attempt = at;
    if (stream === 'stderr') context.stderr.write(`${line}\n`);
    else out.result(line);
  }
  if (logs.lines.length === 0) out.step(`${id} printed nothing (yet)`);
}

export async function callCancel(context: CommandContext, id: string): Promise<void> {
  const { client } = await connect(context);
  await client.delete(callPath(id));
  context.out.done(`cancelled ${id}`);
}

/** Waits for the call to end; the exit code (0 succeeded, 1 failed/cancelled/expired, 2 timed out, 130 stopped). */
export async function callWait(context: CommandContext, id: string, flags: CallWaitFlags = {}): Promise<number> {
  const timeoutMs = flags.timeout === undefined ? Number.POSITIVE_INFINITY : parseTimeout(flags.timeout);
  const deadline = Date.now() + timeoutMs;
  const { client } = await connect(context);
  const { out, signal } = context;
  for (let asked = 0; ; asked++) {
    const wait = Math.max(0, Math.min(WAIT_PER_REQUEST_SECONDS, Math.ceil((deadline - Date.now()) / 1000)));
    let answer: { status: number; body: { call: CallView; frame?: FinalFrame } };
    try {
      const response = await client.send('GET', `${callPath(id)}/outcome`, { headers: { Prefer: `wait=${wait}` }, signal });
      answer = { status: response.status, body: (await response.json()) as { call: CallView; frame?: FinalFrame } };
    } catch (error) {
      if (signal.aborted) {
        out.warn(`stopped waiting: ${id} goes on (svc call cancel ${id} cancels it)`);
        return 130;
      }
      if (error instanceof SvcError && (error.code === 'call_cancelled' || error.code === 'call_expired')) {
        out.warn(error.message);
        return 1;
      }
      throw error;
    }
    const { call, frame } = answer.body;
    if (answer.status === 200 && frame !== undefined) return ended(context, call, frame);
    if (Date.now() >= deadline) {
      out.warn(`${id} is still ${call.status} after --timeout ${flags.timeout}: it goes on (svc call wait ${id} waits again)`);
      return 2;
    }
    if (asked === 0) out.step(`waiting for ${id} (${call.function}, ${call.status})…`);
  }
}

/** Prints how the call ended: a JSON call's result on stdout; a failure, its traceback too, on stderr. */
function ended(context: CommandContext, call: CallView, frame: FinalFrame): number {
  const { out } = context;
  if (call.status === 'succeeded') {
    if (frame.type === 'result' && 'json' in frame) out.result(JSON.stringify(frame.json ?? null));
    out.done(`${call.id} succeeded${call.durationMs === null ? '' : ` in ${(call.durationMs / 1000).toFixed(1)}s`}`);
    return 0;
  }
  if (typeof frame.traceback === 'string' && frame.traceback !== '') context.stderr.write(frame.traceback.replace(/\n?$/, '\n'));
  out.warn(`${call.id} ${call.status}: ${callError(call) || 'no error was recorded'}`);
  return 1;
}

/** `--timeout`: seconds (`90`, `0.5`) or a duration (`5m`, `1h30m`); 0 asks once without waiting. */
function parseTimeout(text: string): number {
  if (/^\d+(\.\d+)?$/.test(text.trim())) return Number(text) * 1000;
  return parseDuration(text, '--timeout');
}
