/**
 * The machine's NVIDIA GPUs, taken once when svc starts (the embedded default): from the file
 * `SVC_GPU_INVENTORY` names (what nvidia-smi's CSV query prints, for tests and dry runs on a
 * machine without GPUs), else from `nvidia-smi` itself. A machine without nvidia-smi, or where
 * it fails, has no GPU: everything else runs as it would anyway, and the reason is said once.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { SvcError } from '../../model/errors.js';
import { inventoryText } from '../../model/gpus/gpu-request.js';
import { type GpuDevice, NVIDIA_SMI_QUERY, parseNvidiaSmiCsv } from '../../model/gpus/nvidia-smi-csv.js';

export interface GpuInventory {
  readonly devices: readonly GpuDevice[];
  /** Where they were read: `SVC_GPU_INVENTORY /path`, `nvidia-smi`, or why there are none (`no nvidia-smi on PATH`). */
  readonly source: string;
}

/** nvidia-smi answers in well under a second; a driver in trouble can hang it. */
const NVIDIA_SMI_TIMEOUT_MS = 10_000;

/** Reads the inventory: from `file` when given (a broken file is `config_invalid`: the operator named it), else from nvidia-smi. */
export async function readGpuInventory(file: string | null, command = 'nvidia-smi'): Promise<GpuInventory> {
  if (file !== null) return { devices: await readInventoryFile(file), source: `SVC_GPU_INVENTORY ${file}` };
  let stdout: string;
  try {
    ({ stdout } = await promisify(execFile)(command, [...NVIDIA_SMI_QUERY], { timeout: NVIDIA_SMI_TIMEOUT_MS, encoding: 'utf8' }));
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    const why = code === 'ENOENT' ? `no ${command} on PATH` : `${command} failed: ${message.split('\n')[0]}`;
    return { devices: [], source: why };
  }
  try {
    return { devices: parseNvidiaSmiCsv(stdout), source: command };
  } catch (error) {
    return { devices: [], source: `${command} printed what svc cannot read: ${(error as Error).message}` };
  }
}

async function readInventoryFile(file: string): Promise<GpuDevice[]> {
  const fail = (why: string) =>
    new SvcError('config_invalid', `the GPU inventory ${file} (gpuInventory, SVC_GPU_INVENTORY) ${why}.`, {
      hint: `It holds what nvidia-smi ${NVIDIA_SMI_QUERY.join(' ')} prints, header line included (docs/gpus.md).`,
    });
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw fail(`cannot be read: ${(error as Error).message}`);
  }
  try {
    return parseNvidiaSmiCsv(text);
  } catch (error) {
    throw fail(`is not nvidia-smi's CSV: ${(error as Error).message}`);
  }
}

/** The one line svc logs at start. */
export function inventoryLine(inventory: GpuInventory): string {
  const { devices, source } = inventory;
  if (devices.length === 0) return `GPUs: none (${source}); workloads with gpu= cannot be deployed here`;
  return `GPUs: ${devices.length} from ${source}: ${inventoryText(devices)}`;
}
