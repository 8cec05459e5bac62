import { spawn, type ChildProcess } from 'node:child_process';

/**
 * A child process that leads its own process group (a container, an image
 * build), so that stopping it also stops everything it started: workers the
 * runtime forks, pip under `python -m venv`. Its stdin is a lifeline pipe: if
 * this Node process dies, even by SIGKILL, the pipe closes; the container
 * runtime exits on that EOF, so no container outlives the platform.
 */
export interface ProcessGroup {
  readonly pid: number | undefined;
  /** Resolves once the leader exited and its output was read to the end. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  hasExited(): boolean;
  /** SIGTERM to the group, SIGKILL after `graceMs`. Resolves when the leader exited. */
  stop(graceMs: number): Promise<void>;
  /** Immediate SIGKILL to the group (used on `process.exit`, where nothing async runs). */
  killNow(): void;
}

export interface SpawnGroupOptions {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly onLine: (stream: 'stdout' | 'stderr', text: string) => void;
}

export function spawnGroup(options: SpawnGroupOptions): ProcessGroup {
  const child: ChildProcess = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('error', (error) => {
      options.onLine('stderr', `could not start ${options.command}: ${error.message}`);
      done = true;
      resolve({ code: null, signal: null });
    });
    // 'close', not 'exit': the last lines of output (a build's error) arrive before it.
    child.on('close', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
  });
  splitLines(child.stdout, (text) => options.onLine('stdout', text));
  splitLines(child.stderr, (text) => options.onLine('stderr', text));
  // The lifeline must not keep Node alive, and a write error on it is not ours to report.
  child.stdin?.on('error', () => {});

  function signalGroup(signal: NodeJS.Signals): void {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // The group is already gone.
    }
  }

  return {
    pid: child.pid,
    exited,
    hasExited: () => done,
    async stop(graceMs) {
      if (!done) {
        signalGroup('SIGTERM');
        const timer = setTimeout(() => signalGroup('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      // Workers the leader forked may still be shutting down; make sure none stay.
      signalGroup('SIGKILL');
      child.stdin?.destroy();
    },
    killNow() {
      signalGroup('SIGKILL');
    },
  };
}

function splitLines(stream: NodeJS.ReadableStream | null, onLine: (text: string) => void): void {
  if (!stream) return;
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop() ?? '';
    for (const part of parts) onLine(part.replace(/\r$/, ''));
  });
  stream.on('end', () => {
    if (rest) onLine(rest);
    rest = '';
  });
}
