/**
 * The outcome of one call from its container's answer: the NDJSON frames are read to the end
 * and the last `result` or `error` frame is kept; its `log` frames go to `onLog` (the call's own
 * logs: they are in the run's logs too). An
 * answer that is an error body instead (the container refused the arguments: 422
 * `invalid_arguments`) becomes an error frame with that code.
 */
import { createInterface } from 'node:readline';
import type { SvcError } from '../../model/errors.js';
import type { CallAnswer } from '../runs/types.js';
import type { FinalFrame } from './types.js';

export async function readFinalFrame(answer: CallAnswer, onLog?: (stream: 'stdout' | 'stderr', line: string) => void): Promise<FinalFrame> {
  if (answer.status !== 200) return refusalFrame(await text(answer));
  let last: FinalFrame | null = null;
  for await (const line of createInterface({ input: answer.body, crlfDelay: Number.POSITIVE_INFINITY })) {
    if (line.trim() === '') continue;
    const frame = parse(line);
    if (frame !== null && (frame.type === 'result' || frame.type === 'error')) last = frame as FinalFrame;
    else if (frame?.type === 'log' && onLog !== undefined) logLine(frame, onLog);
  }
  return last ?? svcErrorFrame('worker_crashed', 'the call ended without a result');
}

/** The error frame of a call svc could not run (its run failed to start, the image did not build, …). */
export function errorFrameOf(error: SvcError): FinalFrame {
  return svcErrorFrame(error.code, error.message);
}

function svcErrorFrame(code: string, message: string): FinalFrame {
  return { type: 'error', code, exception: `${code}: ${message}`, pickle: null, traceback: null };
}

function refusalFrame(body: string): FinalFrame {
  const parsed = parse(body) as { error?: { code?: unknown; message?: unknown } } | null;
  const code = typeof parsed?.error?.code === 'string' ? parsed.error.code : 'internal';
  const message = typeof parsed?.error?.message === 'string' ? parsed.error.message : body.slice(0, 500);
  return svcErrorFrame(code, message);
}

function logLine(frame: { stream?: unknown; line?: unknown }, onLog: (stream: 'stdout' | 'stderr', line: string) => void): void {
  if (typeof frame.line === 'string') onLog(frame.stream === 'stderr' ? 'stderr' : 'stdout', frame.line);
}

function parse(line: string): { type?: unknown; stream?: unknown; line?: unknown } | null {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null ? (value as { type?: unknown; stream?: unknown; line?: unknown }) : null;
  } catch {
    return null;
  }
}

async function text(answer: CallAnswer): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of answer.body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
