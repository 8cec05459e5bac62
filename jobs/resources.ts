/**
 * Resources of the task: svc's `cpu` (cores, fractions allowed) becomes MHz
 * (`cpu × mhzPerCore`, see DEFAULT_MHZ_PER_CORE) or whole reserved `Cores`;
 * `memory` ("512Mi", "1Gi", resolved to MiB) becomes `MemoryMB`, since
 * Nomad's MB are MiB; `gpu` becomes a device request (gpu-devices.ts).
 */
import type { ResourceSpec } from '../core/model/workload/types.js';
import type { ClusterSettings } from './context.js';
import { gpuDevice } from './gpu-devices.js';
import type { EphemeralDisk, LogConfig, Resources } from './types.js';

export function taskResources(spec: ResourceSpec, cluster: Pick<ClusterSettings, 'cpuMode' | 'mhzPerCore'>): Resources {
  const memory = { MemoryMB: spec.memoryMiB, ...(spec.gpu === undefined ? {} : { Devices: [gpuDevice(spec.gpu)] }) };
  if (cluster.cpuMode === 'cores') return { Cores: Math.max(1, Math.ceil(spec.cpu)), ...memory };
  return { CPU: Math.max(1, Math.round(spec.cpu * cluster.mhzPerCore)), ...memory };
}

/** 5 files of 10 MB: 50 MB of logs per task. */
export const logConfig: LogConfig = Object.freeze({ MaxFiles: 5, MaxFileSizeMB: 10 });

/**
 * Room for the logs (50 MB, which Nomad requires the disk to exceed), the
 * downloaded and unpacked bundle and Python's scratch files.
 */
export const ephemeralDisk: EphemeralDisk = Object.freeze({ SizeMB: 500 });
