/**
 * What NVML says each GPU does now, as `nvidia-smi --query-gpu=uuid,utilization.gpu,memory.used
 * --format=csv,noheader,nounits` prints it: one line a GPU, no header, no units:
 *
 *     GPU-5c1a0b7e-2f3d-4c4e-9a1b-0e7d3f2a6b11, 37, 1024
 *
 * Utilisation is the percentage of the last sample period a kernel ran; memory is MiB. A value
 * the driver does not report (`[N/A]`, `[Not Supported]`) is null; a line svc cannot read is
 * skipped: metrics are best effort, and one odd GPU must not hide the others.
 */
import { csvFields } from './nvidia-smi-csv.js';

/** The query svc runs for the usage gauges (only where the inventory came from nvidia-smi). */
export const NVIDIA_SMI_USAGE_QUERY = ['--query-gpu=uuid,utilization.gpu,memory.used', '--format=csv,noheader,nounits'] as const;

export interface GpuUsage {
  readonly uuid: string;
  /** 0 to 1; null where the driver does not say. */
  readonly utilization: number | null;
  readonly memoryUsedBytes: number | null;
}

const MIB = 1024 * 1024;

function numberOf(text: string): number | null {
  return /^\d+(\.\d+)?$/.test(text) ? Number(text) : null;
}

/** Each GPU's usage in `text`, by UUID. */
export function parseNvidiaSmiUsage(text: string): Map<string, GpuUsage> {
  const found = new Map<string, GpuUsage>();
  for (const line of text.replace(/^\uFEFF/, '').split(/\r?\n/)) {
    const [uuid = '', utilization = '', memory = ''] = csvFields(line);
    if (!/^(GPU|MIG)-[A-Za-z0-9-]+$/.test(uuid)) continue;
    const percent = numberOf(utilization);
    const mib = numberOf(memory);
    found.set(uuid, {
      uuid,
      utilization: percent === null ? null : Math.min(1, percent / 100),
      memoryUsedBytes: mib === null ? null : Math.round(mib * MIB),
    });
  }
  return found;
}
