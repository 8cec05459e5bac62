/**
 * One input's answer as the map's frames: each line of the container's NDJSON
 * answer (core/services/runs, the call protocol) parsed and written again with
 * the input's `index`; its final frame (`result` or `error`) ends it. An answer
 * that is not a frame stream (an error of the container's before any frame)
 * and one that ends without a final frame become an error frame, so that
 * every input started gets exactly one final frame.
 */
import type { Readable } from 'node:stream';
import { SvcError, errorBody, errorCodes, toSvcError, type ErrorCode } from '../../model/errors.js';
import { brokenCallFrame, type CallAnswer } from '../runs/types.js';

/** How an input ended: its final frame's type. */
export type Outcome = 'result' | 'error';

/** Where the frames go: the map's output buffer. */
export interface FrameSink {
  push(line: string): void;
  /** True when no more should be read for now; `whenDrained` then says when to go on. */
  overLimit(): boolean;
  whenDrained(resume: () => void): void;
}

/** Error answers are small JSON documents; more than this is not read. */
const ERROR_ANSWER_BYTES = 64 * 1024;

/** A frame line with the input's index added (`{"index": 3, "type": …}`), its `\n` included. */
export function withIndex(line: string, frame: Readonly<Record<string, unknown>>, index: number): string {
  // Spliced in rather than stringified again: the line is already the frame's JSON.
  if (!('index' in frame) && line.startsWith('{') && line.length > 2) return `{"index":${index},${line.slice(1)}\n`;
  return `${JSON.stringify({ ...frame, index })}\n`;
}

/** The final frame of an input that svc could not call, or whose call broke: `{"type": "error", "code", …}`. */
export function errorFrame(index: number, error: unknown): string {
  const failure = toSvcError(error);
  // What an error answer would say: an internal error's own text stays in the server's log.
  const shown = failure.expose ? failure : new SvcError(failure.code, errorBody(failure).error.message);
  const line = brokenCallFrame(shown).trimEnd();
  return withIndex(line, JSON.parse(line) as Record<string, unknown>, index);
}

/** Relays `answer` to `sink` as input `index`'s frames; resolves with how the input ended once its answer is over. */
export function relayAnswer(answer: CallAnswer, index: number, sink: FrameSink): Promise<Outcome> {
  if (answer.status !== 200) return relayErrorAnswer(answer, index, sink);
  const { body } = answer;
  return new Promise<Outcome>((resolve) => {
    let rest = '';
    let outcome: Outcome | null = null;
    const take = (raw: string) => {
      const line = raw.trim();
      if (line === '' || outcome !== null) return; // nothing follows a final frame
      const frame = parse(line);
      if (frame === null) {
        outcome = 'error';
        sink.push(errorFrame(index, new SvcError('worker_crashed', 'the container answered a line that is not a JSON frame.')));
      } else if (frame.type === 'log' || frame.type === 'result' || frame.type === 'error') {
        sink.push(withIndex(line, frame, index));
        if (frame.type !== 'log') outcome = frame.type;
      }
    };
    const finish = () => {
      if (outcome === null) {
        outcome = 'error';
        sink.push(errorFrame(index, new SvcError('worker_crashed', 'the answer of the container ended without a result or an error.')));
      }
      resolve(outcome);
    };
    body.setEncoding('utf8');
    body.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop()!;
      for (const line of lines) take(line);
      if (sink.overLimit() && outcome === null) {
        body.pause();
        sink.whenDrained(() => body.resume());
      }
    });
    body.once('end', () => {
      take(rest);
      finish();
    });
    body.once('close', finish); // cut short (an error comes first): whatever came, then the error frame
    body.on('error', () => {});
  }).finally(() => {
    if (!body.destroyed) body.destroy(); // read to its final frame: the slot goes back now
  });
}

function parse(line: string): Record<string, unknown> | null {
  try {
    const frame: unknown = JSON.parse(line);
    return typeof frame === 'object' && frame !== null && !Array.isArray(frame) ? (frame as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A non-frame answer (the container refused the call: a body that is not a pickled call, `invalid_arguments`): one error frame. */
async function relayErrorAnswer(answer: CallAnswer, index: number, sink: FrameSink): Promise<Outcome> {
  const text = await readSome(answer.body);
  let error: SvcError;
  try {
    const { code, message } = (JSON.parse(text) as { error: { code: unknown; message: unknown } }).error;
    error = new SvcError(typeof code === 'string' && Object.hasOwn(errorCodes, code) ? (code as ErrorCode) : 'internal', String(message));
  } catch {
    error = new SvcError('worker_crashed', `the container answered HTTP ${answer.status} without a frame.`);
  }
  sink.push(errorFrame(index, error));
  return 'error';
}

async function readSome(body: Readable): Promise<string> {
  let text = '';
  try {
    for await (const chunk of body) {
      text += String(chunk);
      if (text.length > ERROR_ANSWER_BYTES) break;
    }
  } catch {
    // cut short: what came is all there is
  }
  body.destroy();
  return text;
}
