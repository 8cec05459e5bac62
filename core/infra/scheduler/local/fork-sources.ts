import type { ProcessGroup } from '../../processes/group.js';
import type { DeploymentUnit } from '../types.js';
import { type Container, type ContainerLog, cgroupProcs } from './container.js';
import { CheckpointTemplate, type TemplateState } from './template.js';
import { gpuEnv } from './gpu-allocator.js';
import { Zygote } from './zygote.js';

export interface TemplateStatus {
  readonly id: string;
  readonly pid: number | undefined;
  readonly state: TemplateState;
}

/** Unit key under which zygotes log: they serve every unit of their image. */
export const ZYGOTE_LOG_UNIT = 'zygote';

const FORK_TIMEOUT_MS = 10_000;

export interface ForkSourcesOptions {
  readonly socketDir: string;
  readonly startTimeoutMs: number;
  readonly stopGraceMs: number;
  readonly out: ContainerLog;
  /** Whether the machine has GPUs, which containers without any are not shown (gpu-allocator.ts gpuEnv); a template itself is shown none. */
  readonly machineHasGpus: boolean;
}

/**
 * The processes containers fork from instead of starting an interpreter:
 * a checkpoint template per unit (imports and on_start done) and a zygote
 * per image (the runtime imported). Each fork that fails is said in the
 * container's log, and the caller starts the container another way.
 */
export class ForkSources {
  private readonly templates = new Map<string, CheckpointTemplate>();
  private readonly zygotes = new Map<string, Zygote>();
  /** Interpreters whose zygote never became ready: their containers are spawned, as without zygotes. */
  private readonly noZygote = new Set<string>();
  private closed = false;

  constructor(private readonly options: ForkSourcesOptions) {}

  template(key: string): TemplateStatus | undefined {
    const template = this.templates.get(key);
    return template && { id: template.id, pid: template.pid, state: template.state };
  }

  zygote(pythonPath: string): TemplateStatus | undefined {
    const zygote = this.zygotes.get(pythonPath);
    return zygote && { id: zygote.id, pid: zygote.pid, state: zygote.state };
  }

  /** Forks the container from the unit's template when it can; undefined when it cannot or a stop came first. */
  async forkFromTemplate(container: Container): Promise<ProcessGroup | undefined> {
    const { unit, id } = container;
    const { out } = this.options;
    const template = this.templateFor(unit);
    const ready = await template.ready;
    if (container.state === 'stopping') return undefined;
    const why = ready === true ? template.unusable() : ready;
    if (why !== null) {
      out.log(
        container,
        'system',
        `checkpoint template of ${unit.workload.name} cannot be used (${why}); starting container ${id} without it: imports and on_start run in it`,
      );
      return undefined;
    }
    try {
      const group = await template.fork({
        container: id,
        workers: unit.workload.scaling.workers,
        cgroup: cgroupProcs(container),
        gpus: container.gpus === undefined ? {} : gpuEnv(container.gpus, true),
        onLine: (stream, text) => out.log(container, stream, text),
        onEvent: (event) => out.onRuntimeEvent(container, event),
        timeoutMs: Math.min(this.options.startTimeoutMs, FORK_TIMEOUT_MS),
      });
      container.startedFrom = 'template';
      out.log(container, 'system', `container ${id} forked from checkpoint template ${template.id} (pid ${group.pid})`);
      return group;
    } catch (error) {
      out.log(
        container,
        'system',
        `checkpoint template ${template.id} could not start container ${id} (${(error as Error).message}); starting it without the checkpoint`,
      );
      return undefined;
    }
  }

  /**
   * Forks the container from its image's zygote, starting the zygote first when the image has
   * none yet (the image's first container waits for it: a zygote's start and a spawned
   * container's are the same interpreter and imports, so the first container costs no more,
   * and the image pays that start once instead of twice). Undefined when it cannot: then the
   * container is spawned, as when the zygote never became ready.
   */
  async forkFromZygote(container: Container): Promise<ProcessGroup | undefined> {
    const { unit, id } = container;
    const { out } = this.options;
    this.ensureZygote(unit);
    const zygote = this.zygotes.get(unit.image.pythonPath);
    if (!zygote) return undefined;
    if (zygote.state === 'starting') {
      const ready = await zygote.ready;
      if (container.state === 'stopping') return undefined;
      if (ready !== true) {
        out.log(container, 'system', `zygote ${zygote.id} did not start (${ready}); starting container ${id} as a new process`);
        return undefined;
      }
    }
    if (zygote.unusable() !== null) return undefined;
    try {
      const group = await zygote.fork({
        container: id,
        unit,
        workers: unit.workload.scaling.workers,
        cgroup: cgroupProcs(container),
        gpus: gpuEnv(container.gpus, this.options.machineHasGpus),
        onLine: (stream, text) => out.log(container, stream, text),
        onEvent: (event) => out.onRuntimeEvent(container, event),
        timeoutMs: Math.min(this.options.startTimeoutMs, FORK_TIMEOUT_MS),
      });
      out.log(container, 'system', `container ${id} forked from zygote ${zygote.id} (pid ${group.pid})`);
      return group;
    } catch (error) {
      out.log(
        container,
        'system',
        `zygote ${zygote.id} could not start container ${id} (${(error as Error).message}); starting it as a new process`,
      );
      return undefined;
    }
  }

  /** Starts the zygote of the unit's image unless it has one (or had one that never became ready). */
  private ensureZygote(unit: DeploymentUnit): void {
    const pythonPath = unit.image.pythonPath;
    const existing = this.zygotes.get(pythonPath);
    if (this.closed || this.noZygote.has(pythonPath) || (existing && (existing.state === 'starting' || existing.state === 'ready'))) return;
    const { socketDir, startTimeoutMs, out } = this.options;
    const zygote = new Zygote({
      pythonPath,
      socketDir,
      startTimeoutMs,
      log: (id, stream, text) => out.emit(ZYGOTE_LOG_UNIT, id, stream, text),
    });
    this.zygotes.set(pythonPath, zygote);
    void zygote.ready.then((ready) => {
      if (ready !== true && zygote.state === 'failed') this.noZygote.add(pythonPath);
    });
  }

  async stopTemplate(key: string): Promise<void> {
    const template = this.templates.get(key);
    this.templates.delete(key);
    await template?.stop(this.options.stopGraceMs);
  }

  stopTemplates(): Promise<void>[] {
    return [...this.templates.keys()].map((key) => this.stopTemplate(key));
  }

  /** Starts no zygote from now on, and stops those there are. */
  stopZygotes(): Promise<void>[] {
    this.closed = true;
    const stopping = [...this.zygotes.values()].map((zygote) => zygote.stop(this.options.stopGraceMs));
    this.zygotes.clear();
    return stopping;
  }

  /** For process 'exit', where nothing async runs. */
  killNow(): void {
    for (const template of this.templates.values()) template.killNow();
    for (const zygote of this.zygotes.values()) zygote.killNow();
  }

  private templateFor(unit: DeploymentUnit): CheckpointTemplate {
    const existing = this.templates.get(unit.key);
    if (existing?.unit === unit) return existing;
    const { socketDir, startTimeoutMs, out } = this.options;
    const template = new CheckpointTemplate({
      unit,
      socketDir,
      startTimeoutMs,
      gpus: gpuEnv(undefined, this.options.machineHasGpus),
      log: (id, stream, text) => out.emit(unit.key, id, stream, text),
    });
    this.templates.set(unit.key, template);
    return template;
  }
}
