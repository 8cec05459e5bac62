/**
 * What a checkpoint template and a zygote share: a Python process of the
 * runtime that forks containers on request over a Unix socket in the
 * driver's private folder (sdk/python/svc/runtime/_forkserver.py). A forked
 * container is not our child: we know it by its pid (it leads its own
 * process group) and by its connection, which carries its output and events
 * and is its lifeline both ways. The server reaps the containers it forked
 * and reports how they ended on its events pipe.
 */
import net from 'node:net';
import path from 'node:path';
import { adoptGroup } from '../../processes/adopted-group.js';
import { describeExit, spawnGroup, type ExitStatus, type ProcessGroup } from '../../processes/group.js';
import { splitLines } from '../../processes/lines.js';
import { parseFrame, type RuntimeEvent } from './frames.js';

export type ForkServerState = 'starting' | 'ready' | 'failed' | 'exited';

export interface ForkServerOptions {
  /** `t-…` or `z-…`: names its control socket. */
  readonly id: string;
  readonly socketDir: string;
  readonly pythonPath: string;
  /** The command line after the interpreter, given the control socket's path. */
  readonly args: (controlPath: string) => string[];
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** How long its start (imports, on_start) may take. */
  readonly startTimeoutMs: number;
  readonly log: (stream: 'stdout' | 'stderr' | 'system', text: string) => void;
  /** How messages name it and its start: `checkpoint template t-…`, `imports and on_start`. */
  readonly label: string;
  /** How fork failures name it: `the template`. */
  readonly noun: string;
  readonly startWork: string;
  /** What happens without it, said once it is gone: `new containers of greet start without it`. */
  readonly without: string;
}

export interface ForkRequest {
  /** The request line, beyond which the server reads nothing. */
  readonly payload: Record<string, unknown> & { readonly container: string };
  readonly onLine: (stream: 'stdout' | 'stderr', text: string) => void;
  readonly onEvent: (event: RuntimeEvent) => void;
  /** How long the server may take to report the new container's pid. */
  readonly timeoutMs: number;
}

/** How long to wait, after a forked container's connection closed, for the server to report its exit status. */
const EXIT_STATUS_WAIT_MS = 500;

export class ForkServer {
  readonly id: string;
  /** True once it takes fork requests; otherwise why it cannot. */
  readonly ready: Promise<true | string>;
  #state: ForkServerState = 'starting';
  #reason = '';
  readonly #group: ProcessGroup;
  readonly #controlPath: string;
  readonly #noun: string;
  readonly #statuses = new Map<string, ExitStatus>();
  readonly #waiters = new Map<string, (status: ExitStatus) => void>();

  constructor(options: ForkServerOptions) {
    this.id = options.id;
    this.#controlPath = path.join(options.socketDir, `${options.id}.sock`);
    this.#noun = options.noun;
    const { log, label } = options;
    let settle: (value: true | string) => void = () => {};
    this.ready = new Promise((resolve) => (settle = resolve));
    this.#group = spawnGroup({
      command: options.pythonPath,
      args: options.args(this.#controlPath),
      cwd: options.cwd,
      env: options.env,
      onLine: log,
      onEventLine: (line) => {
        const frame = parseFrame(line);
        if (frame?.t !== 'event') return;
        if (frame.event.event === 'ready' && this.#state === 'starting') {
          this.#state = 'ready';
          settle(true);
        } else if (frame.event.event === 'container_exited') {
          this.#recordExit(frame.event.container, frame.event.exit);
        }
      },
    });
    const timer = setTimeout(() => {
      if (this.#state !== 'starting') return;
      this.#reason = `it did not finish ${options.startWork} within ${options.startTimeoutMs / 1000} s`;
      this.#state = 'failed';
      log('system', `${label} failed: ${this.#reason}`);
      settle(this.#reason);
      this.#group.killNow();
    }, options.startTimeoutMs);
    void this.#group.exited.then((exit) => {
      clearTimeout(timer);
      if (this.#state === 'starting' || this.#state === 'ready') {
        this.#reason = `it exited with ${describeExit(exit)}`;
        this.#state = this.#state === 'starting' ? 'failed' : 'exited';
        log('system', `${label} ${this.#reason}; ${options.without}`);
      }
      settle(this.#reason);
      // Nobody is left to report how forked containers end.
      const waiters = [...this.#waiters.values()];
      this.#waiters.clear();
      for (const resolve of waiters) resolve({ code: null, signal: null });
    });
  }

  get state(): ForkServerState {
    return this.#state;
  }

  get pid(): number | undefined {
    return this.#group.pid;
  }

  get controlPath(): string {
    return this.#controlPath;
  }

  /** Why no container can be forked now; null when the server is ready. */
  unusable(): string | null {
    return this.#state === 'ready' ? null : this.#reason || 'it is not ready';
  }

  /** Forks a container; rejects with the reason when the server cannot (the caller then starts one normally). */
  fork(request: ForkRequest): Promise<ProcessGroup> {
    const { container } = request.payload;
    const noun = this.#noun;
    return new Promise((resolve, reject) => {
      const connection = net.createConnection(this.#controlPath);
      let group: ProcessGroup | undefined;
      let endedResolve: (status: ExitStatus) => void = () => {};
      const ended = new Promise<ExitStatus>((r) => (endedResolve = r));
      const fail = (why: string) => {
        clearTimeout(timer);
        connection.destroy();
        reject(new Error(why));
      };
      const timer = setTimeout(() => fail(`${noun} did not start the container within ${request.timeoutMs / 1000} s`), request.timeoutMs);
      connection.on('error', (error) => {
        if (!group) fail(`could not reach ${noun}: ${error.message}`);
      });
      connection.on('close', () => {
        if (!group) return fail(`${noun} closed the connection before the container started`);
        void this.#exitStatus(container).then(endedResolve);
      });
      splitLines(connection, (line) => {
        const frame = parseFrame(line);
        if (!frame) return;
        if (frame.t === 'started' && !group) {
          clearTimeout(timer);
          group = adoptGroup({ pid: frame.pid, ended, closeLifeline: () => connection.destroy() });
          resolve(group);
        } else if (frame.t === 'error') {
          fail(`${noun} refused: ${frame.message}`);
        } else if (frame.t === 'out' || frame.t === 'err') {
          request.onLine(frame.t === 'out' ? 'stdout' : 'stderr', frame.text);
        } else if (frame.t === 'event') {
          request.onEvent(frame.event);
        }
      });
      connection.write(`${JSON.stringify(request.payload)}\n`);
    });
  }

  /** Stops the server itself; the containers it forked live on (they have their own lifelines). */
  async stop(graceMs: number): Promise<void> {
    if (this.#state === 'starting' || this.#state === 'ready') {
      this.#state = 'exited';
      this.#reason = 'it was stopped';
    }
    await this.#group.stop(graceMs);
  }

  killNow(): void {
    this.#group.killNow();
  }

  #recordExit(container: string, status: ExitStatus): void {
    const waiter = this.#waiters.get(container);
    if (waiter) {
      this.#waiters.delete(container);
      waiter(status);
    } else {
      this.#statuses.set(container, status);
    }
  }

  /** The server reaps forked containers and reports how they ended; wait briefly for that report. */
  #exitStatus(container: string): Promise<ExitStatus> {
    const known = this.#statuses.get(container);
    if (known) {
      this.#statuses.delete(container);
      return Promise.resolve(known);
    }
    if (this.#group.hasExited()) return Promise.resolve({ code: null, signal: null });
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(container);
        resolve({ code: null, signal: null });
      }, EXIT_STATUS_WAIT_MS);
      this.#waiters.set(container, (status) => {
        clearTimeout(timer);
        resolve(status);
      });
    });
  }
}
