/** Checks `workloads`: each entry's keys, name, kind, handler, image, doc, options and schemas. */
import type { IssueCollector } from '../workload/issues.js';
import { hasSignature, nameProblem, optionalWorkloadKeys, workloadKeys, workloadKinds } from '../workload/rules.js';
import { validateSecretNames } from './validate-secrets.js';
import { nameIssue } from './name-issue.js';
import type { WorkloadKind } from '../workload/types.js';
import { checkArray, checkKeys, checkObject, checkString, jsonTypeName, type Plain } from './shape-checks.js';
import { validateOptions } from './validate-options.js';
import { validateParameters, validateReturns } from './validate-schemas.js';

/**
 * Validates the workloads list. `imageIds` are the ids `images` declares
 * (null when `images` itself is broken: references are then not checked).
 * Returns the image ids the workloads use, to find unused images.
 */
export function validateWorkloads(workloads: unknown, imageIds: ReadonlyMap<string, number> | null, issues: IssueCollector): Set<string> {
  const used = new Set<string>();
  if (!checkArray(workloads, issues)) return used;
  const names = new Map<string, number>();
  workloads.forEach((workload, index) => {
    const at = issues.at(index);
    if (!checkObject(workload, at)) return;
    checkKeys(workload, workloadKeys, at, 'key', '', optionalWorkloadKeys);
    checkName(workload, names, index, at);
    const kind = checkKind(workload, at);
    if (Object.hasOwn(workload, 'image') && checkString(workload.image, at.at('image'))) {
      used.add(workload.image);
      if (imageIds !== null && !imageIds.has(workload.image)) {
        at.add(`no entry of images has this id; known: ${[...imageIds.keys()].join(', ') || '(none)'}`, 'image');
      }
    }
    if (Object.hasOwn(workload, 'doc') && workload.doc !== null && typeof workload.doc !== 'string') {
      at.add(`must be a string or null, got ${jsonTypeName(workload.doc)}`, 'doc');
    }
    // The rest depends on the kind: without a valid one there is nothing to check against.
    if (kind === null) return;
    if (Object.hasOwn(workload, 'handler')) checkHandler(kind, workload.handler, at.at('handler'));
    if (Object.hasOwn(workload, 'options')) validateOptions(kind, workload.options, at.at('options'));
    if (Object.hasOwn(workload, 'parameters')) validateParameters(kind, workload.parameters, at.at('parameters'));
    if (Object.hasOwn(workload, 'returns')) validateReturns(kind, workload.returns, at.at('returns'));
    if (Object.hasOwn(workload, 'secrets')) validateSecretNames(workload.secrets, at.at('secrets'));
  });
  return used;
}

function checkName(workload: Plain, names: Map<string, number>, index: number, issues: IssueCollector): void {
  if (!Object.hasOwn(workload, 'name') || !checkString(workload.name, issues.at('name'))) return;
  const name = workload.name;
  const problem = nameProblem(name, 'workload');
  if (problem !== null) issues.add(nameIssue(name, problem), 'name');
  const first = names.get(name);
  if (first !== undefined) issues.add(`duplicate workload name ${JSON.stringify(name)} (also workloads[${first}])`, 'name');
  else names.set(name, index);
}

function checkKind(workload: Plain, issues: IssueCollector): WorkloadKind | null {
  if (!Object.hasOwn(workload, 'kind')) return null;
  const kind = workload.kind;
  if (typeof kind === 'string' && (workloadKinds as readonly string[]).includes(kind)) return kind as WorkloadKind;
  const got = typeof kind === 'string' ? JSON.stringify(kind) : jsonTypeName(kind);
  issues.add(`must be one of ${workloadKinds.join(', ')}, got ${got}`, 'kind');
  return null;
}

function checkHandler(kind: WorkloadKind, handler: unknown, issues: IssueCollector): void {
  if (!hasSignature(kind)) {
    if (handler !== null) issues.add(`must be null for kind ${kind} (the app object is found by workload name)`);
    return;
  }
  checkString(handler, issues, { nonEmpty: true });
}
