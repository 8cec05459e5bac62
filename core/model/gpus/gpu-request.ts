/**
 * A workload's `gpu` option as the platform holds it (the manifest's `{"models", "count"}`):
 * which models it takes, in order of preference, and how many GPUs each container gets; and
 * whether an inventory can ever give it that, which a deploy checks (`gpu_unavailable`).
 */
import { SvcError } from '../errors.js';
import { ANY_GPU, gpuMatches } from './gpu-names.js';
import type { GpuDevice } from './nvidia-smi-csv.js';

export interface GpuRequest {
  /** Model names (gpu-names.ts), tried in order; `any` alone, or last. */
  readonly models: readonly string[];
  /** GPUs per container, of one model. */
  readonly count: number;
}

/** The most GPUs one container may ask for (a machine has at most 8 of one kind, as the SDK's check says), and the most models a list may try. */
export const gpuRules = Object.freeze({ maxCount: 8, maxModels: 8 });

/** `H100`, `H100 ×2`, `H100 | A100 ×2`, `any`: the request in a few characters, for lists and logs. */
export function gpuRequestText(request: GpuRequest): string {
  return `${request.models.join(' | ')}${request.count > 1 ? ` ×${request.count}` : ''}`;
}

/** The devices of `devices` that are `model`. */
export function devicesOf(model: string, devices: readonly GpuDevice[]): GpuDevice[] {
  return devices.filter((device) => gpuMatches(model, device.name, device.memoryMiB));
}

/** Whether some model of the request has `count` GPUs among `devices` (all of the machine's: could it ever start?). */
export function gpuRequestFits(request: GpuRequest, devices: readonly GpuDevice[]): boolean {
  return request.models.some((model) => devicesOf(model, devices).length >= request.count);
}

/** `0: H100 (NVIDIA H100 80GB HBM3, 81559 MiB)`, one a GPU; `none` without. */
export function inventoryText(devices: readonly GpuDevice[]): string {
  if (devices.length === 0) return 'none';
  return devices.map((d) => `${d.index}: ${d.model} (${d.name}${d.memoryMiB === null ? '' : `, ${d.memoryMiB} MiB`})`).join('; ');
}

/** What one model of the request finds: `2 H100` asked, `1` there. */
function shortfall(model: string, count: number, devices: readonly GpuDevice[]): string {
  const found = devicesOf(model, devices).length;
  const what = model === ANY_GPU ? 'GPU' : model;
  return found === 0 ? `no ${what}` : `${found} ${what}, not ${count}`;
}

/** `gpu_unavailable` for a workload whose request the platform's GPUs can never meet, or null when they can. */
export function gpuUnavailable(workload: string, request: GpuRequest, devices: readonly GpuDevice[]): SvcError | null {
  if (gpuRequestFits(request, devices)) return null;
  const found = request.models.map((model) => shortfall(model, request.count, devices)).join(', ');
  return new SvcError(
    'gpu_unavailable',
    `the workload ${workload} asks for gpu ${gpuRequestText(request)}, but this platform has ${found}. Its GPUs: ${inventoryText(devices)}.`,
    {
      hint:
        devices.length === 0
          ? 'Deploy it where svc finds NVIDIA GPUs (nvidia-smi), or drop gpu= from its decorator.'
          : 'Ask for a model this platform has (or "any"), fewer GPUs, or a fallback list (gpu=["H100", "A100"]); docs/gpus.md.',
      details: {
        workload,
        gpu: { models: [...request.models], count: request.count },
        gpus: devices.map((d) => ({ index: d.index, uuid: d.uuid, name: d.name, model: d.model, memoryMiB: d.memoryMiB })),
      },
    },
  );
}
