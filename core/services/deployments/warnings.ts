/**
 * Options the SDK accepts and validates but svc does not act on where they
 * run. A deploy names them, so that nobody believes `memory="2Gi"` changed
 * anything. (The autoscaler and `keep_warm` are enforced by core/services/autoscale;
 * `cpu` and `memory` by the scheduler: cgroups of the local driver, Nomad's
 * task resources; `domain` by the plugin svc:custom-domains, for deployments.)
 */
import type { Enforcement } from '../../infra/processes/cgroups/types.js';
import { optionDefaults } from '../../model/workload/defaults.js';
import { formatMemoryMiB, parseMemoryMiB } from '../../model/workload/memory.js';
import type { Workload } from '../../model/workload/types.js';

/** A preview (or a run) serves no custom domain: one line per workload that sets one. */
export function domainsNotServed(workload: Workload): string[] {
  const { http } = workload;
  return http?.domain
    ? [`${workload.name}: domain=${pythonLiteral(http.domain)} is served by the deployment only (svc deploy); a preview answers at its URL`]
    : [];
}

/**
 * One line for the whole deploy when the scheduler cannot hold containers to
 * their `cpu` and `memory` (`limits` says why) and a workload sets either to
 * a non-default value: `cpu and memory are not limited on this machine (svc
 * runs as uid 1000, not root, …): tuned sets cpu=2, memory="1Gi"`. Where the
 * operator chose so (`limits.chosen`), every deploy says why.
 */
export function unlimitedResources(workloads: readonly Workload[], limits: Enforcement | undefined): string[] {
  if (limits === undefined || limits.enforced) return [];
  if (limits.chosen === true) return [`cpu and memory are not limited: ${limits.why}`];
  const settings = workloads.flatMap((workload) => {
    const { cpu, memoryMiB } = workload.resources;
    const set = [
      ...(cpu !== optionDefaults.cpu ? [`cpu=${pythonLiteral(cpu)}`] : []),
      ...(memoryMiB !== defaultMemoryMiB ? [`memory=${pythonLiteral(formatMemoryMiB(memoryMiB))}`] : []),
    ];
    return set.length > 0 ? [`${workload.name} sets ${set.join(', ')}`] : [];
  });
  return settings.length > 0 ? [`cpu and memory are not limited on this machine (${limits.why}): ${settings.join('; ')}`] : [];
}

const defaultMemoryMiB = parseMemoryMiB(optionDefaults.memory);

/** Values as the user wrote them in Python: `True`, `"2Gi"`, `4`. */
function pythonLiteral(value: unknown): string {
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}
