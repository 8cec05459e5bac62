/**
 * What the scrape-time gauges read: each served unit's requests in flight
 * and queued (admission) and its containers by state (the driver).
 */
import type { Admission } from './admission.js';
import type { RouteTable } from './route-table.js';
import type { SchedulerDriver } from '../../infra/scheduler/types.js';
import type { UnitReading } from '../../infra/metrics/platform-metrics.js';

export function* unitReadings(
  routes: RouteTable,
  admission: Pick<Admission, 'load'>,
  driver: Pick<SchedulerDriver, 'status'>,
): Iterable<UnitReading> {
  const seen = new Set<string>();
  for (const entry of routes.entries()) {
    // A unit may have several entries (its path and its host): one reading.
    if (seen.has(entry.unit)) continue;
    seen.add(entry.unit);
    const containers: Record<string, number> = {};
    for (const container of driver.status(entry.unit)) containers[container.state] = (containers[container.state] ?? 0) + 1;
    yield { ref: entry.ref, workload: entry.workload.name, ...admission.load(entry.unit), containers };
  }
}
