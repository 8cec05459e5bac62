import { workloadHost, workloadPrefix } from '../gateway/urls.js';
import type { HostTaken } from '../gateway/route-table.js';
import type { RouteEntry } from '../gateway/types.js';
import type { Workload } from '../workload/types.js';
import { unitKey, type DeploymentRef } from './keys.js';

/**
 * The gateway routes of a deployment's served workloads: each has its path
 * prefix, and a host name under the base domain when one is configured and the
 * names make a valid DNS label. `warnings` say why a workload has no host URL.
 */
export function routeEntriesFor(ref: DeploymentRef, served: readonly Workload[], baseDomain: string | null): { entries: RouteEntry[]; warnings: string[] } {
  const warnings: string[] = [];
  const entries = served.map((workload): RouteEntry => {
    const entry = { ref, workload, unit: unitKey(ref, workload.name), prefix: workloadPrefix(ref, workload.name) };
    if (baseDomain === null) return entry;
    const host = workloadHost(ref, workload.name, baseDomain);
    if ('host' in host) return { ...entry, host: host.host };
    warnings.push(`${workload.name}: no host-based URL: ${host.problem}; use its path URL`);
    return entry;
  });
  return { entries, warnings };
}

/** One warning per host name another workload already holds (the first holder keeps it). */
export function hostTakenWarnings(taken: readonly HostTaken[]): string[] {
  return taken.map(({ entry, host, heldBy }) => `${entry.workload.name}: no host-based URL: ${host} is already served by ${heldBy}; use its path URL`);
}
