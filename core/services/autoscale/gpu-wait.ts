/**
 * Why a unit's container waits for a GPU, in words for the 503 and 429 its requests get: what
 * it asks, how many of each model it may take are busy and who holds them, and how many
 * containers wait ahead of it (first come, first served: GPUs they could use are kept for them).
 */
import type { GpuState } from '../../infra/scheduler/types.js';

/** `waiting for a GPU (gpu any): 2 of 2 L4 busy (held by containers c-1, c-2); 1 container waits ahead of it`; null when none of the unit's containers waits. */
export function gpuWaitText(unit: string, state: GpuState): string | null {
  const at = state.waiting.findIndex((waiter) => waiter.unit === unit);
  if (at < 0) return null;
  const waiter = state.waiting[at]!;
  const models = waiter.models.map((model) => {
    const gpus = state.models.find((m) => m.model === model);
    if (gpus === undefined) return `no ${model}`;
    const holders =
      gpus.holders.length === 0 ? '' : ` (held by container${gpus.holders.length === 1 ? '' : 's'} ${gpus.holders.join(', ')})`;
    return `${gpus.busy} of ${gpus.busy + gpus.free} ${model} busy${holders}`;
  });
  const ahead = at === 0 ? '' : `; ${at} container${at === 1 ? '' : 's'} ${at === 1 ? 'waits' : 'wait'} ahead of it`;
  return `waiting for a GPU (gpu ${waiter.request}): ${models.join(', ')}${ahead}`;
}
