/**
 * Options the SDK accepts and validates but this version does not act on.
 * A deploy names each one a workload sets to a non-default value, so that
 * nobody believes `keep_warm=300` or `memory="2Gi"` changed anything.
 */
import { optionDefaults } from '../workload/defaults.js';
import { formatMemoryMiB, parseMemoryMiB } from '../workload/memory.js';
import type { Workload } from '../workload/types.js';

export interface UnenforcedOptionsContext {
  /** False for the local driver: containers are plain process groups without cgroup limits. */
  readonly resourcesLimited: boolean;
}

/** One line per unenforced option of `workload`, e.g. `greet: keep_warm=300 is not enforced yet: containers run until the deployment stops`. */
export function unenforcedOptions(workload: Workload, context: UnenforcedOptionsContext): string[] {
  const lines: string[] = [];
  const say = (option: string, value: unknown, why: string) => lines.push(`${workload.name}: ${option}=${pythonLiteral(value)} ${why}`);
  const notYet = (why: string) => `is not enforced yet: ${why}`;

  const { cpu, memoryMiB } = workload.resources;
  if (!context.resourcesLimited && cpu !== optionDefaults.cpu) say('cpu', cpu, 'is not limited on the embedded platform');
  if (!context.resourcesLimited && memoryMiB !== defaultMemoryMiB) say('memory', formatMemoryMiB(memoryMiB), 'is not limited on the embedded platform');

  const endpoint = workload.kind === 'endpoint';
  const { scaling, http } = workload;
  const autoscaler = changedAutoscalerFields(workload);
  if (autoscaler.length > 0) {
    const started = Math.max(1, scaling.autoscaler.minContainers);
    const kept = started === 1 ? '1 container and keeps it' : `${started} containers and keeps them`;
    lines.push(`${workload.name}: autoscaler ${autoscaler.join(', ')} ${notYet(`nothing scales with load; the deploy starts ${kept}`)}`);
  }
  if (scaling.keepWarmSeconds !== optionDefaults.keep_warm) {
    say(endpoint ? 'keep_warm' : 'keep_warm_seconds', scaling.keepWarmSeconds, notYet('containers run until the deployment stops'));
  }
  if (http?.domain) say('domain', http.domain, notYet(`custom domains are not served; use the workload's URL`));
  return lines;
}

const defaultMemoryMiB = parseMemoryMiB(optionDefaults.memory);

/** min_containers is honoured (the deploy starts that many); the others need an autoscaler. */
function changedAutoscalerFields(workload: Workload): string[] {
  const { maxContainers, tasksPerContainer } = workload.scaling.autoscaler;
  const fields: string[] = [];
  if (maxContainers !== optionDefaults.autoscaler.max_containers) fields.push(`max_containers=${maxContainers}`);
  if (tasksPerContainer !== optionDefaults.autoscaler.tasks_per_container) fields.push(`tasks_per_container=${tasksPerContainer}`);
  return fields;
}

/** Values as the user wrote them in Python: `True`, `"2Gi"`, `4`. */
function pythonLiteral(value: unknown): string {
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}
