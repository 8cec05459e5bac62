import { randomBytes } from 'node:crypto';
import type { ProcessGroup } from '../../processes/group.js';
import type { DeploymentUnit } from '../types.js';
import { ForkServer, type ForkServerState } from './fork-server.js';
import type { RuntimeEvent } from './frames.js';
import { runtimeEnv, templateArgs } from './runtime-command.js';

export type TemplateState = ForkServerState;

export interface TemplateOptions {
  readonly unit: DeploymentUnit;
  readonly socketDir: string;
  /** How long imports and on_start may take. */
  readonly startTimeoutMs: number;
  /** What its environment says of GPUs: none (it must not touch CUDA; each container it forks is given its own). */
  readonly gpus: Readonly<Record<string, string>>;
  /** The template's own output and what happens to it. */
  readonly log: (templateId: string, stream: 'stdout' | 'stderr' | 'system', text: string) => void;
}

export interface ForkRequest {
  readonly container: string;
  readonly workers: number;
  /** The `cgroup.procs` files the forked container joins before it serves (empty: none). */
  readonly cgroup: readonly string[];
  /** The container's GPU variables (gpu-allocator.ts gpuEnv), set in the child before it runs anything; empty without GPUs. */
  readonly gpus: Readonly<Record<string, string>>;
  readonly onLine: (stream: 'stdout' | 'stderr', text: string) => void;
  readonly onEvent: (event: RuntimeEvent) => void;
  /** How long the template may take to report the new container's pid. */
  readonly timeoutMs: number;
}

/**
 * The checkpoint template of one unit version: `python -m svc.runtime
 * template`, a warmed process (imports and on_start done once) that forks
 * the unit's containers on request (the fork-server protocol of
 * fork-server.ts, which the zygote shares).
 */
export class CheckpointTemplate {
  readonly id = `t-${randomBytes(5).toString('hex')}`;
  readonly unit: DeploymentUnit;
  /** True once it takes fork requests; otherwise why it cannot. */
  readonly ready: Promise<true | string>;
  readonly #server: ForkServer;
  readonly #socketDir: string;

  constructor(options: TemplateOptions) {
    this.unit = options.unit;
    this.#socketDir = options.socketDir;
    const log = (stream: 'stdout' | 'stderr' | 'system', text: string) => options.log(this.id, stream, text);
    log('system', `starting checkpoint template ${this.id} for ${options.unit.workload.name}`);
    this.#server = new ForkServer({
      id: this.id,
      socketDir: options.socketDir,
      pythonPath: options.unit.image.pythonPath,
      args: (controlPath) => templateArgs(options.unit, controlPath),
      cwd: options.unit.source.root,
      env: runtimeEnv(options.unit, options.gpus),
      startTimeoutMs: options.startTimeoutMs,
      log,
      label: `checkpoint template ${this.id}`,
      noun: 'the template',
      startWork: 'imports and on_start',
      without: `new containers of ${options.unit.workload.name} start without it`,
    });
    this.ready = this.#server.ready;
  }

  get state(): TemplateState {
    return this.#server.state;
  }

  get pid(): number | undefined {
    return this.#server.pid;
  }

  /** Why no container can be forked now; null when the template is ready. */
  unusable(): string | null {
    return this.#server.unusable();
  }

  /** Forks a container; rejects with the reason when the template cannot (the caller then starts one normally). */
  fork(request: ForkRequest): Promise<ProcessGroup> {
    return this.#server.fork({
      payload: {
        container: request.container,
        socket_dir: this.#socketDir,
        workers: request.workers,
        cgroup: request.cgroup,
        gpu_env: request.gpus,
      },
      onLine: request.onLine,
      onEvent: request.onEvent,
      timeoutMs: request.timeoutMs,
    });
  }

  /** Stops the template itself; the containers it forked live on (they have their own lifelines). */
  stop(graceMs: number): Promise<void> {
    return this.#server.stop(graceMs);
  }

  killNow(): void {
    this.#server.killNow();
  }
}
