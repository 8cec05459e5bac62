/**
 * The GPU series of `/metrics`, read at scrape time: the machine's GPUs by model and state (free,
 * busy) on the embedded default, and, where svc read its GPUs from nvidia-smi, each held GPU's
 * utilisation and memory in use (NVML) with the container and workload holding it.
 */
import { Gauge, type Registry } from 'prom-client';
import type { DeploymentRef } from '../../model/workload/deployment-ref.js';

/** One held GPU as NVML sees it, and who holds it. */
export interface HeldGpuReading {
  readonly ref: DeploymentRef;
  readonly workload: string;
  readonly container: string;
  readonly uuid: string;
  readonly utilization: number | null;
  readonly memoryUsedBytes: number | null;
}

/** What one scrape reads of the GPUs; null where the platform hands out none (Nomad, or a machine without). */
export interface GpuReading {
  readonly models: readonly { readonly model: string; readonly free: number; readonly busy: number }[];
  readonly held: readonly HeldGpuReading[];
}

export type GpuReader = () => Promise<GpuReading | null>;

const HELD_LABELS = ['workspace', 'app', 'workload', 'stage', 'container', 'gpu'] as const;

function heldLabels(held: HeldGpuReading): Record<(typeof HELD_LABELS)[number], string> {
  const { ref } = held;
  return { workspace: ref.workspace, app: ref.app, workload: held.workload, stage: ref.stage, container: held.container, gpu: held.uuid };
}

export class GpuMetrics {
  #reader: GpuReader = () => Promise.resolve(null);
  /** One read per scrape, shared by the three gauges (collected one after the other). */
  #scrape: { readonly at: number; readonly reading: Promise<GpuReading | null> } | null = null;

  constructor(registry: Registry) {
    const registers = [registry];
    const reading = () => this.#read();
    new Gauge({
      name: 'svc_gpus',
      help: "The machine's GPUs by svc's model name and state (free, busy), on the embedded default.",
      labelNames: ['model', 'state'],
      registers,
      async collect() {
        this.reset();
        for (const { model, free, busy } of (await reading())?.models ?? []) {
          this.set({ model, state: 'free' }, free);
          this.set({ model, state: 'busy' }, busy);
        }
      },
    });
    new Gauge({
      name: 'svc_gpu_utilization_ratio',
      help: 'Of each GPU a container holds, the share of the last sample period a kernel ran (NVML; only where svc read its GPUs from nvidia-smi).',
      labelNames: HELD_LABELS,
      registers,
      async collect() {
        this.reset();
        for (const held of (await reading())?.held ?? []) if (held.utilization !== null) this.set(heldLabels(held), held.utilization);
      },
    });
    new Gauge({
      name: 'svc_gpu_memory_used_bytes',
      help: 'Of each GPU a container holds, the memory in use (NVML; only where svc read its GPUs from nvidia-smi).',
      labelNames: HELD_LABELS,
      registers,
      async collect() {
        this.reset();
        for (const held of (await reading())?.held ?? [])
          if (held.memoryUsedBytes !== null) this.set(heldLabels(held), held.memoryUsedBytes);
      },
    });
  }

  /** Where the gauges read, once the platform has built its driver and routes. */
  read(reader: GpuReader): void {
    this.#reader = reader;
    this.#scrape = null;
  }

  #read(): Promise<GpuReading | null> {
    const now = performance.now();
    if (this.#scrape === null || now - this.#scrape.at > 100) this.#scrape = { at: now, reading: this.#reader().catch(() => null) };
    return this.#scrape.reading;
  }
}
