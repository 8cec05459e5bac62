import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { adoptGroup } from '../../processes/adopted-group.js';
import { describeExit, spawnGroup, type ExitStatus, type ProcessGroup } from '../../processes/group.js';
import { splitLines } from '../../processes/lines.js';
import type { DeploymentUnit } from '../types.js';
import { parseFrame, type RuntimeEvent } from './frames.js';
import { runtimeEnv, templateArgs } from './runtime-command.js';

export type TemplateState = 'starting' | 'ready' | 'failed' | 'exited';

export interface TemplateOptions {
  readonly unit: DeploymentUnit;
  readonly socketDir: string;
  /** How long imports and on_start may take. */
  readonly startTimeoutMs: number;
  /** The template's own output and what happens to it. */
  readonly log: (templateId: string, stream: 'stdout' | 'stderr' | 'system', text: string) => void;
}

export interface ForkRequest {
  readonly container: string;
  readonly workers: number;
  readonly onLine: (stream: 'stdout' | 'stderr', text: string) => void;
  readonly onEvent: (event: RuntimeEvent) => void;
  /** How long the template may take to report the new container's pid. */
  readonly timeoutMs: number;
}

/** How long to wait, after a forked container's connection closed, for the template to report its exit status. */
const EXIT_STATUS_WAIT_MS = 500;

/**
 * The checkpoint template of one unit version: `python -m svc.runtime
 * template`, a warmed process (imports and on_start done once) that forks
 * the unit's containers on request over a Unix socket in the driver's
 * private folder. A forked container is not our child: we know it by its
 * pid (it leads its own process group) and by the connection, which carries
 * its output and events and is its lifeline both ways.
 */
export class CheckpointTemplate {
  readonly id = `t-${randomBytes(5).toString('hex')}`;
  readonly unit: DeploymentUnit;
  /** True once it takes fork requests; otherwise why it cannot. */
  readonly ready: Promise<true | string>;
  #state: TemplateState = 'starting';
  #reason = '';
  readonly #group: ProcessGroup;
  readonly #controlPath: string;
  readonly #statuses = new Map<string, ExitStatus>();
  readonly #waiters = new Map<string, (status: ExitStatus) => void>();

  constructor(options: TemplateOptions) {
    this.unit = options.unit;
    this.#controlPath = path.join(options.socketDir, `${this.id}.sock`);
    const log = (stream: 'stdout' | 'stderr' | 'system', text: string) => options.log(this.id, stream, text);
    let settle: (value: true | string) => void = () => {};
    this.ready = new Promise((resolve) => (settle = resolve));
    this.#group = spawnGroup({
      command: options.unit.image.pythonPath,
      args: templateArgs(options.unit, this.#controlPath),
      cwd: options.unit.source.root,
      env: runtimeEnv(options.unit),
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
    log('system', `starting checkpoint template ${this.id} for ${options.unit.workload.name}`);
    const timer = setTimeout(() => {
      if (this.#state !== 'starting') return;
      this.#fail(`it did not finish imports and on_start within ${options.startTimeoutMs / 1000} s`);
      log('system', `checkpoint template ${this.id} failed: ${this.#reason}`);
      settle(this.#reason);
      this.#group.killNow();
    }, options.startTimeoutMs);
    void this.#group.exited.then((exit) => {
      clearTimeout(timer);
      if (this.#state === 'starting' || this.#state === 'ready') {
        this.#reason = `it exited with ${describeExit(exit)}`;
        this.#state = this.#state === 'starting' ? 'failed' : 'exited';
        log('system', `checkpoint template ${this.id} ${this.#reason}; new containers of ${options.unit.workload.name} start without it`);
      }
      settle(this.#reason);
      // Nobody is left to report how forked containers end.
      const waiters = [...this.#waiters.values()];
      this.#waiters.clear();
      for (const resolve of waiters) resolve({ code: null, signal: null });
    });
  }

  get state(): TemplateState {
    return this.#state;
  }

  get pid(): number | undefined {
    return this.#group.pid;
  }

  /** Why no container can be forked now; null when the template is ready. */
  unusable(): string | null {
    return this.#state === 'ready' ? null : this.#reason || 'it is not ready';
  }

  /** Forks a container; rejects with the reason when the template cannot (the caller then starts one normally). */
  fork(request: ForkRequest): Promise<ProcessGroup> {
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
      const timer = setTimeout(() => fail(`the template did not start the container within ${request.timeoutMs / 1000} s`), request.timeoutMs);
      connection.on('error', (error) => {
        if (!group) fail(`could not reach the template: ${error.message}`);
      });
      connection.on('close', () => {
        if (!group) return fail('the template closed the connection before the container started');
        void this.#exitStatus(request.container).then(endedResolve);
      });
      splitLines(connection, (line) => {
        const frame = parseFrame(line);
        if (!frame) return;
        if (frame.t === 'started' && !group) {
          clearTimeout(timer);
          group = adoptGroup({ pid: frame.pid, ended, closeLifeline: () => connection.destroy() });
          resolve(group);
        } else if (frame.t === 'error') {
          fail(`the template refused: ${frame.message}`);
        } else if (frame.t === 'out' || frame.t === 'err') {
          request.onLine(frame.t === 'out' ? 'stdout' : 'stderr', frame.text);
        } else if (frame.t === 'event') {
          request.onEvent(frame.event);
        }
      });
      connection.write(`${JSON.stringify({ container: request.container, socket_dir: path.dirname(this.#controlPath), workers: request.workers })}\n`);
    });
  }

  /** Stops the template itself; the containers it forked live on (they have their own lifelines). */
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

  #fail(reason: string): void {
    this.#reason = reason;
    this.#state = 'failed';
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

  /** The template reaps forked containers and reports how they ended; wait briefly for that report. */
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
