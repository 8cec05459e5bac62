/** Runs CLI commands in-process: a context whose stdout and stderr are captured, with the environment and terminal the test says. */
import { Writable } from 'node:stream';
import type { CommandContext, TextSink } from '../../cli/context.js';
import { sleep } from '../../cli/context.js';
import { createOutput } from '../../cli/output.js';
import { tempDir } from '../helpers/config.js';

export interface Captured {
  readonly context: CommandContext;
  readonly stdout: () => string;
  /** What was written to stdout as bytes (a file's content). */
  readonly stdoutBytes: () => Buffer;
  readonly stderr: () => string;
  /** Resolves once stderr (or stdout) contains a match of `pattern`: the match. */
  readonly waitFor: (pattern: RegExp, stream?: 'stdout' | 'stderr') => Promise<RegExpMatchArray>;
  /** Like Ctrl-C: aborts the context's signal. */
  readonly stop: () => void;
  readonly opened: string[];
}

export interface CaptureOptions {
  readonly env?: Record<string, string | undefined>;
  readonly interactive?: boolean;
  readonly answers?: string[];
  readonly sleep?: (ms: number) => Promise<void>;
  readonly cwd?: string;
}

export function capture(options: CaptureOptions = {}): Captured {
  const text = { stdout: '', stderr: '' };
  const waiters: { pattern: RegExp; stream: 'stdout' | 'stderr'; resolve: (match: RegExpMatchArray) => void }[] = [];
  const check = () => {
    for (const waiter of [...waiters]) {
      const match = text[waiter.stream].match(waiter.pattern);
      if (match) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(match);
      }
    }
  };
  const sink = (stream: 'stdout' | 'stderr'): TextSink & NodeJS.WriteStream =>
    ({
      isTTY: false,
      write(chunk: string) {
        text[stream] += chunk;
        check();
        return true;
      },
    }) as unknown as TextSink & NodeJS.WriteStream;
  const stdout = sink('stdout');
  const stderr = sink('stderr');
  const abort = new AbortController();
  const answers = [...(options.answers ?? [])];
  const opened: string[] = [];
  const bytes: Buffer[] = [];
  const stdoutBytes = new Writable({
    write(chunk: Buffer, _encoding, done) {
      bytes.push(chunk);
      done();
    },
  });
  const context: CommandContext = {
    out: createOutput(stdout, stderr),
    stdoutBytes,
    stderr,
    // Only what the test gives: never the developer's own ~/.svc or SVC_TOKEN.
    env: { SVC_CONFIG_DIR: tempDir('svc-config-'), SVC_DATA_DIR: tempDir('svc-nodata-'), ...options.env },
    interactive: options.interactive ?? false,
    prompt: async (question) => {
      text.stderr += question;
      return answers.shift() ?? '';
    },
    openBrowser: (url) => void opened.push(url),
    sleep: options.sleep ?? ((ms) => sleep(ms, abort.signal)),
    signal: abort.signal,
    cwd: options.cwd ?? process.cwd(),
  };
  return {
    context,
    stdout: () => text.stdout,
    stdoutBytes: () => Buffer.concat(bytes),
    stderr: () => text.stderr,
    waitFor: (pattern, stream = 'stderr') =>
      new Promise((resolve) => {
        waiters.push({ pattern, stream, resolve });
        check();
      }),
    stop: () => abort.abort(),
    opened,
  };
}

/** The SvcError code a promise rejects with (fails the test when it resolves). */
export async function rejectsWith(promise: Promise<unknown>): Promise<{ code: string; message: string; hint?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code: string; message: string; hint?: string };
  }
  throw new Error('expected the command to fail');
}
