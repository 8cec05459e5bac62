import type { SvcError } from '../../model/errors.js';
import { workloadHost, workloadPrefix } from '../../model/urls.js';
import type { HostTaken, RouteEntry } from '../../traffic/gateway/types.js';
import type { Workload } from '../../model/workload/types.js';
import { unitKey, type DeploymentRef } from '../../model/deployment-keys.js';

/**
 * The gateway route of one served workload: its path prefix, and a host name
 * under the base domain when one is configured and the names make a valid DNS
 * label (else `warning` says why it has none). `unit` is the unit serving it
 * now; an `offline` route keeps the URL and answers with that error instead.
 */
export function routeEntryFor(
  ref: DeploymentRef,
  workload: Workload,
  baseDomain: string | null,
  unit: string,
  offline?: SvcError,
): { entry: RouteEntry; warning: string | null } {
  const entry: RouteEntry = { ref, workload, unit, prefix: workloadPrefix(ref, workload.name), ...(offline ? { offline } : {}) };
  if (baseDomain === null) return { entry, warning: null };
  const host = workloadHost(ref, workload.name, baseDomain);
  if ('host' in host) return { entry: { ...entry, host: host.host }, warning: null };
  return { entry, warning: `${workload.name}: no host-based URL: ${host.problem}; use its path URL` };
}

/** The routes a deploy will take (under the workloads' stable unit keys), for checking that their URLs are free. */
export function routeEntriesFor(
  ref: DeploymentRef,
  served: readonly Workload[],
  baseDomain: string | null,
): { entries: RouteEntry[]; warnings: string[] } {
  const made = served.map((workload) => routeEntryFor(ref, workload, baseDomain, unitKey(ref, workload.name)));
  return { entries: made.map((m) => m.entry), warnings: made.flatMap((m) => (m.warning === null ? [] : [m.warning])) };
}

/** One warning per host name another workload already holds (the first holder keeps it). */
export function hostTakenWarnings(taken: readonly HostTaken[]): string[] {
  return taken.map(
    ({ entry, host, heldBy }) => `${entry.workload.name}: no host-based URL: ${host} is already served by ${heldBy}; use its path URL`,
  );
}
