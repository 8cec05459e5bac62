/**
 * A workload's `gpu` as Nomad's device request (`resources { device "nvidia/gpu" { … } }`,
 * `structs.RequestedDevice`): `Count` GPUs from Nomad's NVIDIA device plugin, constrained to the
 * models the request names. Nomad's `${device.model}` is the full name the driver reports
 * (`NVIDIA H100 80GB HBM3`), so `=` with `H100` would match no node: each model is a `regexp`
 * built by svc's one matching rule (core/model/gpus/gpu-names.ts). A fallback list constrains
 * to any of its models and prefers them in order with affinities (100, 50, 33, …); `any`
 * constrains nothing. Nomad gives the task `NVIDIA_VISIBLE_DEVICES` of the GPUs it placed.
 */
import { ANY_GPU, gpuModelPattern } from '../core/model/gpus/gpu-names.js';
import type { GpuRequest } from '../core/model/gpus/gpu-request.js';
import type { Affinity, Constraint, RequestedDevice } from './types.js';

/** The device Nomad's NVIDIA plugin fingerprints (vendor/type). */
export const NVIDIA_GPU_DEVICE = 'nvidia/gpu';
const MODEL = '${device.model}';

/** RE2's case-insensitive flag: NVIDIA writes `Tesla T4` and `NVIDIA L4`. */
const caseless = (pattern: string): string => `(?i)${pattern}`;

export function gpuDevice(request: GpuRequest): RequestedDevice {
  const named = request.models.filter((model) => model !== ANY_GPU);
  const constraints: Constraint[] =
    named.length === 0 || named.length < request.models.length
      ? []
      : [
          {
            LTarget: MODEL,
            Operand: 'regexp',
            RTarget: caseless(named.length === 1 ? gpuModelPattern(named[0]!) : named.map((m) => `(${gpuModelPattern(m)})`).join('|')),
          },
        ];
  const affinities: Affinity[] =
    request.models.length < 2
      ? []
      : named.map((model, order) => ({
          LTarget: MODEL,
          Operand: 'regexp',
          RTarget: caseless(gpuModelPattern(model)),
          Weight: Math.round(100 / (order + 1)),
        }));
  return {
    Name: NVIDIA_GPU_DEVICE,
    Count: request.count,
    ...(constraints.length > 0 ? { Constraints: constraints } : {}),
    ...(affinities.length > 0 ? { Affinities: affinities } : {}),
  };
}
