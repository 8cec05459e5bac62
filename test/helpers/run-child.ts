import { spawn, type StdioOptions } from 'node:child_process';

export interface ChildResult {
  readonly code: number;
  /** What it printed on the pipes it was given (nothing for an inherited stdio), both streams as they came. */
  readonly output: string;
  /** The same, each stream on its own. */
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a child process (a test runner's, a command's) to its end: its exit code (1 when killed by a signal) and its piped output. */
export function runChild(
  command: string,
  args: readonly string[],
  options: { readonly cwd: string; readonly stdio: StdioOptions; readonly env?: NodeJS.ProcessEnv },
): Promise<ChildResult> {
  const child = spawn(command, args, { cwd: options.cwd, stdio: options.stdio, env: options.env ?? process.env });
  const text = { output: '', stdout: '', stderr: '' };
  for (const stream of ['stdout', 'stderr'] as const) {
    child[stream]?.setEncoding('utf8').on('data', (chunk: string) => {
      text.output += chunk;
      text[stream] += chunk;
    });
  }
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), ...text }));
  });
}
