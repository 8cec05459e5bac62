/**
 * The GPUs' utilisation and memory now (NVML, through nvidia-smi), read when /metrics is scraped:
 * only where the inventory came from nvidia-smi itself (a `SVC_GPU_INVENTORY` file names GPUs
 * that are not there). Read at most every few seconds however many scrapes come, and never
 * longer than a short time-out: a driver in trouble must not hold up the scrape.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { type GpuUsage, NVIDIA_SMI_USAGE_QUERY, parseNvidiaSmiUsage } from '../../model/gpus/nvidia-smi-usage.js';
import type { GpuInventory } from './inventory.js';

export type GpuUsageReader = () => Promise<ReadonlyMap<string, GpuUsage>>;

const REUSE_MS = 5_000;
const TIMEOUT_MS = 3_000;
const NONE: ReadonlyMap<string, GpuUsage> = new Map();

/** Reads usage through `command` (nvidia-smi) for an inventory it listed; null for an inventory from a file or without GPUs. */
export function gpuUsageReader(inventory: GpuInventory, command = 'nvidia-smi'): GpuUsageReader | null {
  if (inventory.devices.length === 0 || inventory.source !== command) return null;
  let last: { readonly at: number; readonly usage: Promise<ReadonlyMap<string, GpuUsage>> } | null = null;
  return () => {
    const now = performance.now();
    if (last === null || now - last.at > REUSE_MS) last = { at: now, usage: readUsage(command) };
    return last.usage;
  };
}

async function readUsage(command: string): Promise<ReadonlyMap<string, GpuUsage>> {
  try {
    const { stdout } = await promisify(execFile)(command, [...NVIDIA_SMI_USAGE_QUERY], { timeout: TIMEOUT_MS, encoding: 'utf8' });
    return parseNvidiaSmiUsage(stdout);
  } catch {
    return NONE; // the gauges go empty for this scrape; the inventory line at start said what svc found
  }
}
