/**
 * What the scrape-time gauges read: each served unit's requests in flight
 * and queued (admission) and its containers by state (the driver); and the
 * machine's GPUs, each held one with the workload holding it (the driver's
 * allocator, and NVML where svc reads it).
 */
import type { Admission } from './admission.js';
import type { RouteTable } from './route-table.js';
import type { SchedulerDriver } from '../../infra/scheduler/types.js';
import type { UnitReading } from '../../infra/metrics/platform-metrics.js';
import type { GpuReading, HeldGpuReading } from '../../infra/metrics/gpu-metrics.js';
import type { GpuUsageReader } from '../../infra/gpus/gpu-usage.js';

/** Each served unit once (a unit may have several entries: its path and its host). */
function* servedUnits(routes: RouteTable) {
  const seen = new Set<string>();
  for (const entry of routes.entries()) {
    if (seen.has(entry.unit)) continue;
    seen.add(entry.unit);
    yield entry;
  }
}

export function* unitReadings(
  routes: RouteTable,
  admission: Pick<Admission, 'load'>,
  driver: Pick<SchedulerDriver, 'status'>,
): Iterable<UnitReading> {
  for (const entry of servedUnits(routes)) {
    const containers: Record<string, number> = {};
    let gpuWaiting = 0;
    for (const container of driver.status(entry.unit)) {
      containers[container.state] = (containers[container.state] ?? 0) + 1;
      if (container.gpu?.state === 'waiting') gpuWaiting += 1;
    }
    yield { ref: entry.ref, workload: entry.workload.name, ...admission.load(entry.unit), containers, gpuWaiting };
  }
}

/** The GPUs by model, and each held one's usage (when `usage` reads NVML) with the served workload holding it; null without GPUs here. */
export async function gpuReading(
  routes: RouteTable,
  driver: Pick<SchedulerDriver, 'status' | 'gpus'>,
  usage: GpuUsageReader | null,
): Promise<GpuReading | null> {
  const state = driver.gpus?.();
  if (state === undefined) return null;
  const models = state.models.map(({ model, free, busy }) => ({ model, free, busy }));
  if (usage === null || state.held.size === 0) return { models, held: [] };
  const used = await usage();
  const holders = new Map<string, { ref: HeldGpuReading['ref']; workload: string }>();
  for (const entry of servedUnits(routes))
    for (const container of driver.status(entry.unit)) holders.set(container.id, { ref: entry.ref, workload: entry.workload.name });
  const held: HeldGpuReading[] = [];
  for (const [uuid, container] of state.held) {
    const holder = holders.get(container);
    const gpu = used.get(uuid);
    if (holder !== undefined && gpu !== undefined)
      held.push({ ...holder, container, uuid, utilization: gpu.utilization, memoryUsedBytes: gpu.memoryUsedBytes });
  }
  return { models, held };
}
