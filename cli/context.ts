/**
 * What a command that talks to a server runs with: where its output goes, the
 * environment it reads (SVC_SERVER, SVC_TOKEN, SVC_CONFIG_DIR…), whether a
 * person is at a terminal (prompts, opening a browser), and how it waits and
 * stops. `processContext()` is the real one; tests pass their own, so that
 * every command runs in-process against a real server.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import { createOutput, type Output } from './output.js';
import { ApiClient } from './api-client.js';
import { resolveCredentials, type ResolvedCredentials } from './credentials.js';

export interface TextSink {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export interface CommandContext {
  readonly out: Output;
  /** Standard output as bytes, for a file's content (`svc volume get <volume> <file> -`). */
  readonly stdoutBytes: Writable;
  /** Raw stderr, for blocks that are not one progress line (the sign-in link). */
  readonly stderr: TextSink;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** A person at a terminal (stdin and stderr are TTYs): prompts and opening a browser are allowed. */
  readonly interactive: boolean;
  /** Asks a question on the terminal; the answer line. */
  prompt(question: string): Promise<string>;
  /** Opens a URL in a browser; failures are ignored. */
  openBrowser(url: string): void;
  /** Waits; resolves early (without error) when `signal` aborts. */
  sleep(ms: number): Promise<void>;
  /** Aborted on Ctrl-C for commands that run until stopped (`svc logs --follow`, `svc login`). */
  readonly signal: AbortSignal;
  /** Where relative paths and module names are resolved (`svc deploy`). */
  readonly cwd: string;
}

/**
 * The context of the running process: real stdout/stderr and process.env.
 * With `stoppable` (commands that run until stopped: `svc logs --follow`,
 * `svc login`), the first Ctrl-C or SIGTERM aborts `signal` so that the
 * command ends cleanly; a second one exits at once. Without it, Ctrl-C
 * exits at once as usual.
 */
export function processContext(options: { stoppable?: boolean } = {}): CommandContext {
  const abort = new AbortController();
  if (options.stoppable) {
    const handler = (signal: NodeJS.Signals) => {
      if (abort.signal.aborted) process.exit(signal === 'SIGINT' ? 130 : 143);
      abort.abort();
    };
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
  }
  return {
    out: createOutput(),
    stdoutBytes: process.stdout,
    stderr: process.stderr,
    env: process.env,
    interactive: Boolean(process.stdin.isTTY) && Boolean(process.stderr.isTTY),
    prompt: (question) => ask(question),
    openBrowser,
    sleep: (ms) => sleep(ms, abort.signal),
    signal: abort.signal,
    cwd: process.cwd(),
  };
}

/** The server and token of this context, and a client for them; prints what the lookup warned about. */
export async function connect(context: CommandContext): Promise<{ client: ApiClient; credentials: ResolvedCredentials }> {
  const credentials = await resolveCredentials(context.env);
  for (const warning of credentials.warnings) context.out.warn(warning);
  const client = new ApiClient({
    server: credentials.server,
    token: credentials.token,
    serverSource: credentials.sources.server.description,
    tokenSource: credentials.sources.token.description,
  });
  return { client, credentials };
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  return new Promise((resolve) => {
    rl.question(question, (answer) => {
      rl.close();
      resolve(answer);
    });
    rl.on('close', () => resolve(''));
  });
}

/** `open` on macOS, `xdg-open` elsewhere; detached, silent, failures ignored (the link is printed anyway). */
function openBrowser(url: string): void {
  const command = process.platform === 'darwin' ? 'open' : 'xdg-open';
  try {
    const child = spawn(command, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // No browser here: the link is on the screen.
  }
}
