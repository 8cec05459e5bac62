import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { splitLines } from './lines.js';

/** How a process ended; both null when it is unknown (it never started, or it was not our child). */
export interface ExitStatus {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export function describeExit(exit: ExitStatus): string {
  if (exit.signal) return `signal ${exit.signal}`;
  return exit.code === null ? 'an unknown status' : `code ${exit.code}`;
}

/**
 * A process that leads its own process group (a container, an image build),
 * so that stopping it also stops everything it started: workers the runtime
 * forks, pip under `python -m venv`. For a child we spawned, its stdin is a
 * lifeline pipe: if this Node process dies, even by SIGKILL, the pipe
 * closes; the container runtime exits on that EOF, so no container outlives
 * the platform.
 */
export interface ProcessGroup {
  readonly pid: number | undefined;
  /** Resolves once the leader exited and its output was read to the end. */
  readonly exited: Promise<ExitStatus>;
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
  /** Opens a fourth pipe (fd 3 in the child) and passes each line the child writes to it. */
  readonly onEventLine?: (text: string) => void;
  /**
   * Kills what is left of the leader's work beyond its process group once it
   * exits (a container's cgroup: a subprocess in a session of its own would
   * otherwise hold the output pipes, and 'close', open for good).
   */
  readonly killRest?: () => void;
}

export function spawnGroup(options: SpawnGroupOptions): ProcessGroup {
  const child: ChildProcess = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: options.onEventLine ? ['pipe', 'pipe', 'pipe', 'pipe'] : ['pipe', 'pipe', 'pipe'],
  });
  let done = false;
  const exited = new Promise<ExitStatus>((resolve) => {
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
  // A group whose leader is gone is finished: kill what is left at once, so that 'close'
  // (which waits for every holder of the output pipes) does not wait for orphans to drain.
  child.on('exit', () => {
    signalGroup('SIGKILL');
    options.killRest?.();
  });
  splitLines(child.stdout, (text) => options.onLine('stdout', text));
  splitLines(child.stderr, (text) => options.onLine('stderr', text));
  if (options.onEventLine) splitLines(child.stdio[3] as Readable | null, options.onEventLine);
  // The lifeline must not keep Node alive, and a write error on it is not ours to report.
  child.stdin?.on('error', () => {});

  function signalGroup(signal: NodeJS.Signals): void {
    if (child.pid !== undefined) signalProcessGroup(child.pid, signal);
  }

  return {
    pid: child.pid,
    exited,
    hasExited: () => done,
    async stop(graceMs) {
      await stopGroup(signalGroup, exited, () => done, graceMs);
      child.stdin?.destroy();
    },
    killNow() {
      signalGroup('SIGKILL');
    },
  };
}

/** kill(-pgid): a group that is already gone is not an error. */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // The group is already gone.
  }
}

/** SIGTERM, SIGKILL after `graceMs` if still running, and SIGKILL once more for stragglers. */
export async function stopGroup(
  signal: (s: NodeJS.Signals) => void,
  exited: Promise<unknown>,
  done: () => boolean,
  graceMs: number,
): Promise<void> {
  if (!done()) {
    signal('SIGTERM');
    const timer = setTimeout(() => signal('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
  // Workers the leader forked may still be shutting down; make sure none stay.
  signal('SIGKILL');
}
