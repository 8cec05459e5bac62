/**
 * The machine's GPUs as the local driver's capacity: each starting container that asks for
 * GPUs takes exactly its own (by UUID) and gives them back when it stops or exits; no GPU is
 * ever held by two containers. A request no free GPUs meet waits (without failing), first come
 * first served: GPUs one waiter could use are kept for it, so a later, smaller request cannot
 * starve it; GPUs no earlier waiter could use go to whoever can. A request the machine could
 * never meet is refused at once (`gpu_unavailable`), as a deploy is.
 */
import { ANY_GPU } from '../../../model/gpus/gpu-names.js';
import { type GpuRequest, devicesOf, gpuRequestText, gpuUnavailable } from '../../../model/gpus/gpu-request.js';
import type { GpuDevice } from '../../../model/gpus/nvidia-smi-csv.js';
import type { GpuState } from '../types.js';

/** GPUs handed to one container. */
export interface GpuGrant {
  /** svc's model name of the devices (`H100`, `A100-80GB`); the models joined by "," if they differ. */
  readonly model: string;
  /** The entry of the request's list they answer: `H100`, or `any`. */
  readonly requested: string;
  readonly devices: readonly GpuDevice[];
  /** Gives them back; more calls do nothing. */
  readonly release: () => void;
}

/** Who asks: a container (`holder`) of a workload (`unit` its unit's key), for its `gpu` option. */
export interface GpuAsk {
  readonly request: GpuRequest;
  readonly holder: string;
  readonly workload: string;
  readonly unit: string;
}

interface Waiter {
  readonly request: GpuRequest;
  readonly holder: string;
  readonly unit: string;
  readonly grant: (grant: GpuGrant) => void;
}

/** Which of `free` a request takes: the first model of its list with enough, devices of one model first, lowest indexes. */
export function chooseGpus(request: GpuRequest, free: readonly GpuDevice[]): { requested: string; devices: GpuDevice[] } | null {
  for (const requested of request.models) {
    const matching = devicesOf(requested, free).sort((a, b) => a.index - b.index);
    if (matching.length < request.count) continue;
    // "A100" or "any" over mixed models: one model's devices when some model has enough.
    const models = [...new Set(matching.map((device) => device.model))];
    const alike = models.map((model) => matching.filter((device) => device.model === model)).find((same) => same.length >= request.count);
    return { requested, devices: (alike ?? matching).slice(0, request.count) };
  }
  return null;
}

export class GpuAllocator {
  /** UUID → the container holding it. */
  readonly #held = new Map<string, string>();
  readonly #waiting: Waiter[] = [];

  constructor(readonly devices: readonly GpuDevice[]) {}

  /** Who holds each GPU now (UUID → container id). */
  get held(): ReadonlyMap<string, string> {
    return this.#held;
  }

  /** How many requests wait for GPUs. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Each model's GPUs free and busy (and by whom), and the waiters in the order they are served: why a container waits. */
  state(): GpuState {
    const models = [...new Set(this.devices.map((device) => device.model))].map((model) => {
      const busy = this.devices.filter((device) => device.model === model && this.#held.has(device.uuid));
      return {
        model,
        free: this.devices.filter((device) => device.model === model).length - busy.length,
        busy: busy.length,
        holders: [...new Set(busy.map((device) => this.#held.get(device.uuid)!))],
      };
    });
    const waiting = this.#waiting.map((waiter) => ({
      container: waiter.holder,
      unit: waiter.unit,
      request: gpuRequestText(waiter.request),
      models: [...new Set(waiter.request.models.flatMap((model) => devicesOf(model, this.devices).map((device) => device.model)))],
    }));
    return { models, waiting, held: new Map(this.#held) };
  }

  /**
   * The GPUs of `holder` (a container id), once free: at once when they are, else when others
   * give theirs back; undefined when `signal` aborts the wait. Throws `gpu_unavailable` for a
   * request this machine could never meet. `onWait` is called when it has to wait.
   */
  async take(ask: GpuAsk, signal: AbortSignal, onWait?: (holders: string[]) => void): Promise<GpuGrant | undefined> {
    const { request, holder } = ask;
    const never = gpuUnavailable(ask.workload, request, this.devices);
    if (never) throw never;
    if (signal.aborted) return undefined;
    return new Promise<GpuGrant | undefined>((resolve) => {
      const waiter: Waiter = {
        request,
        holder,
        unit: ask.unit,
        grant: (grant) => {
          signal.removeEventListener('abort', abort);
          resolve(grant);
        },
      };
      const abort = () => {
        const at = this.#waiting.indexOf(waiter);
        if (at >= 0) this.#waiting.splice(at, 1);
        resolve(undefined);
        // Its place in the queue may have kept GPUs from those behind it.
        this.#dispatch();
      };
      signal.addEventListener('abort', abort, { once: true });
      this.#waiting.push(waiter);
      this.#dispatch();
      if (this.#waiting.includes(waiter)) onWait?.(this.#holdersOfMatching(request));
    });
  }

  /** The containers holding GPUs the request could use: whom it waits for. */
  #holdersOfMatching(request: GpuRequest): string[] {
    const usable = new Set(request.models.flatMap((model) => devicesOf(model, this.devices).map((device) => device.uuid)));
    return [...new Set([...this.#held].filter(([uuid]) => usable.has(uuid)).map(([, holder]) => holder))];
  }

  /** Grants waiters in order; a waiter that cannot be served keeps the GPUs it could use from those behind it. */
  #dispatch(): void {
    const kept = new Set<string>();
    for (const waiter of [...this.#waiting]) {
      const free = this.devices.filter((device) => !this.#held.has(device.uuid) && !kept.has(device.uuid));
      const chosen = chooseGpus(waiter.request, free);
      if (chosen === null) {
        for (const model of waiter.request.models) for (const device of devicesOf(model, free)) kept.add(device.uuid);
        continue;
      }
      this.#waiting.splice(this.#waiting.indexOf(waiter), 1);
      for (const device of chosen.devices) this.#held.set(device.uuid, waiter.holder);
      waiter.grant(this.#grant(waiter.holder, chosen.requested, chosen.devices));
    }
  }

  #grant(holder: string, requested: string, devices: GpuDevice[]): GpuGrant {
    let held = true;
    return {
      model: [...new Set(devices.map((device) => device.model))].join(','),
      requested,
      devices,
      release: () => {
        if (!held) return;
        held = false;
        for (const device of devices) if (this.#held.get(device.uuid) === holder) this.#held.delete(device.uuid);
        this.#dispatch();
      },
    };
  }
}

/**
 * What a container's environment says of GPUs: its own by UUID (CUDA and the NVIDIA container
 * runtime read them; indexes would shift), and its model; a container without GPUs on a machine
 * with some is shown none, so that it cannot take one another container holds.
 */
export function gpuEnv(grant: GpuGrant | undefined, machineHasGpus: boolean): Record<string, string> {
  if (grant !== undefined) {
    const uuids = grant.devices.map((device) => device.uuid).join(',');
    return { CUDA_VISIBLE_DEVICES: uuids, NVIDIA_VISIBLE_DEVICES: uuids, SVC_GPU_MODEL: grant.model };
  }
  return machineHasGpus ? { CUDA_VISIBLE_DEVICES: '', NVIDIA_VISIBLE_DEVICES: 'void' } : {};
}

/** `GPU 0 (H100, GPU-5c1a…)`, for the container's log. */
export function grantText(grant: GpuGrant): string {
  const devices = grant.devices.map((device) => `${device.index} (${device.uuid})`).join(', ');
  const from = grant.requested === ANY_GPU || grant.requested === grant.model ? '' : ` for ${grant.requested} in its gpu list`;
  return `${grant.devices.length === 1 ? 'GPU' : 'GPUs'} ${devices}: ${grant.model}${from}`;
}
