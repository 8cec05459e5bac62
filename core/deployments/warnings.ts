/**
 * Options the SDK accepts and validates but this version does not act on.
 * A deploy names each one a workload sets to a non-default value, so that
 * nobody believes `memory="2Gi"` or a `domain` changed anything. (The
 * autoscaler and `keep_warm` are enforced by core/autoscale.)
 */
import { optionDefaults } from '../workload/defaults.js';
import { formatMemoryMiB, parseMemoryMiB } from '../workload/memory.js';
import type { Workload } from '../workload/types.js';

export interface UnenforcedOptionsContext {
  /** False for the local driver: containers are plain process groups without cgroup limits. */
  readonly resourcesLimited: boolean;
}

/** One line per unenforced option of `workload`, e.g. `greet: memory="2Gi" is not limited on the embedded platform`. */
export function unenforcedOptions(workload: Workload, context: UnenforcedOptionsContext): string[] {
  const lines: string[] = [];
  const say = (option: string, value: unknown, why: string) => lines.push(`${workload.name}: ${option}=${pythonLiteral(value)} ${why}`);
  const notYet = (why: string) => `is not enforced yet: ${why}`;

  const { cpu, memoryMiB } = workload.resources;
  if (!context.resourcesLimited && cpu !== optionDefaults.cpu) say('cpu', cpu, 'is not limited on the embedded platform');
  if (!context.resourcesLimited && memoryMiB !== defaultMemoryMiB) say('memory', formatMemoryMiB(memoryMiB), 'is not limited on the embedded platform');

  const { http } = workload;
  if (http?.domain) say('domain', http.domain, notYet(`custom domains are not served; use the workload's URL`));
  return lines;
}

const defaultMemoryMiB = parseMemoryMiB(optionDefaults.memory);

/** Values as the user wrote them in Python: `True`, `"2Gi"`, `4`. */
function pythonLiteral(value: unknown): string {
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}
