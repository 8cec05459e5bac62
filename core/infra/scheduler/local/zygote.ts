/**
 * The zygote of one image: `python -m svc.runtime zygote` in the image's
 * interpreter, which imported the runtime (uvicorn, httptools, uvloop, svc)
 * once and never the user's code. It forks containers of any workload of
 * the image on request; each child takes the container's environment and
 * folder and imports the user's module fresh, so a container starts without
 * an interpreter start or the runtime's imports (the bulk of a cold start),
 * while versions stay as isolated as spawned containers. The fork-server
 * protocol (control socket as lifeline and log channel, process groups) is
 * the checkpoint template's (fork-server.ts).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { ProcessGroup } from '../../processes/group.js';
import type { DeploymentUnit } from '../types.js';
import { ForkServer, type ForkServerState } from './fork-server.js';
import type { RuntimeEvent } from './frames.js';
import { baseRuntimeEnv, containerEnv, zygoteArgs } from './runtime-command.js';

export interface ZygoteOptions {
  readonly pythonPath: string;
  readonly socketDir: string;
  /** How long the runtime's imports may take. */
  readonly startTimeoutMs: number;
  readonly log: (zygoteId: string, stream: 'stdout' | 'stderr' | 'system', text: string) => void;
}

export interface ZygoteForkRequest {
  readonly container: string;
  readonly unit: DeploymentUnit;
  readonly workers: number;
  /** The `cgroup.procs` files the forked container joins before it imports the user's code. */
  readonly cgroup: readonly string[];
  /** What its environment says of GPUs (gpu-allocator.ts gpuEnv). */
  readonly gpus: Readonly<Record<string, string>>;
  readonly onLine: (stream: 'stdout' | 'stderr', text: string) => void;
  readonly onEvent: (event: RuntimeEvent) => void;
  readonly timeoutMs: number;
}

export class Zygote {
  readonly id = `z-${randomBytes(5).toString('hex')}`;
  readonly pythonPath: string;
  readonly ready: Promise<true | string>;
  readonly #server: ForkServer;
  readonly #socketDir: string;

  constructor(options: ZygoteOptions) {
    this.pythonPath = options.pythonPath;
    this.#socketDir = options.socketDir;
    const log = (stream: 'stdout' | 'stderr' | 'system', text: string) => options.log(this.id, stream, text);
    log('system', `starting zygote ${this.id} for ${options.pythonPath}`);
    this.#server = new ForkServer({
      id: this.id,
      socketDir: options.socketDir,
      pythonPath: options.pythonPath,
      args: zygoteArgs,
      // A folder of no project: the child moves into its container's own.
      cwd: options.socketDir,
      env: baseRuntimeEnv(),
      startTimeoutMs: options.startTimeoutMs,
      log,
      label: `zygote ${this.id}`,
      noun: 'the zygote',
      startWork: "the runtime's imports",
      without: 'new containers of this image start from new processes',
    });
    this.ready = this.#server.ready;
  }

  get state(): ForkServerState {
    return this.#server.state;
  }

  get pid(): number | undefined {
    return this.#server.pid;
  }

  unusable(): string | null {
    return this.#server.unusable();
  }

  /** Forks a container of `unit`; rejects with the reason when the zygote cannot (the caller then spawns it). */
  fork(request: ZygoteForkRequest): Promise<ProcessGroup> {
    const { unit } = request;
    return this.#server.fork({
      payload: {
        container: request.container,
        socket_dir: this.#socketDir,
        workers: request.workers,
        root: path.resolve(unit.source.root),
        entry: unit.source.entry,
        workload: unit.workload.name,
        env: containerEnv(unit, request.gpus),
        cgroup: request.cgroup,
      },
      onLine: request.onLine,
      onEvent: request.onEvent,
      timeoutMs: request.timeoutMs,
    });
  }

  stop(graceMs: number): Promise<void> {
    return this.#server.stop(graceMs);
  }

  killNow(): void {
    this.#server.killNow();
  }
}
