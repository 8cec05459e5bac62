/** Checks a workload's `options` against the option table of its kind (core/workload/rules.ts). */
import type { IssueCollector } from '../workload/issues.js';
import { formatMemoryMiB, parseMemoryMiB } from '../workload/memory.js';
import {
  autoscalerRules,
  httpMethods,
  isDomainName,
  laterOptions,
  memoryRule,
  optionTable,
  optionsByKind,
  retriesRules,
  routeProblems,
  type AutoscalerKey,
  type OptionRule,
  type RetriesKey,
} from '../workload/rules.js';
import type { WorkloadKind } from '../workload/types.js';
import { checkArray, checkBoolean, checkKeys, checkNumberInRange, checkObject, checkString, jsonTypeName, type Plain } from './shape-checks.js';

export function validateOptions(kind: WorkloadKind, options: unknown, issues: IssueCollector): void {
  if (!checkObject(options, issues)) return;
  const allowed = optionsByKind[kind];
  checkKeys(options, allowed, issues, 'option', `for kind ${kind}`, laterOptions);
  for (const name of allowed) {
    if (Object.hasOwn(options, name)) checkOption(optionTable[name].rule, options[name], issues.at(name));
  }
}

function checkOption(rule: OptionRule, value: unknown, issues: IssueCollector): void {
  switch (rule.type) {
    case 'number':
    case 'integer':
      checkNumberInRange(value, issues, { min: rule.min, max: rule.max, integer: rule.type === 'integer' });
      return;
    case 'boolean':
      checkBoolean(value, issues);
      return;
    case 'memory':
      checkMemory(value, issues);
      return;
    case 'route':
      if (checkString(value, issues)) {
        const problems = routeProblems(value);
        if (problems.length > 0) issues.add(`${problems.join('; ')}, got ${JSON.stringify(value)}`);
      }
      return;
    case 'methods':
      checkMethods(value, issues);
      return;
    case 'openapi':
      if (value !== null && typeof value !== 'string') issues.add(`must be null (not read) or the app's path of its OpenAPI description, like "/openapi.json", got ${jsonTypeName(value)}`);
      else if (typeof value === 'string') {
        const problems = routeProblems(value);
        if (problems.length > 0) issues.add(`${problems.join('; ')}, got ${JSON.stringify(value)}`);
      }
      return;
    case 'domain':
      if (value !== null && typeof value !== 'string') issues.add(`must be null or a string, got ${jsonTypeName(value)}`);
      else if (typeof value === 'string' && !isDomainName(value)) {
        issues.add(`must be a lower-case DNS hostname with at least one dot, like "api.example.com", got ${JSON.stringify(value)}`);
      }
      return;
    case 'autoscaler':
      if (checkObject(value, issues)) checkAutoscaler(value, issues);
      return;
    case 'callable':
      if (value !== null && (typeof value !== 'string' || value === '')) {
        issues.add(`must be null or the name of the on_start function (a non-empty string), got ${typeof value === 'string' ? '""' : jsonTypeName(value)}`);
      }
      return;
    case 'retries':
      if (value !== null) checkRetries(value, issues);
      return;
  }
}

/** null (no retries) or `{max_retries, backoff_coefficient, initial_delay, max_delay}`, each in its range. */
function checkRetries(value: unknown, issues: IssueCollector): void {
  if (!checkObject(value, issues)) return;
  const keys = Object.keys(retriesRules) as RetriesKey[];
  checkKeys(value, keys, issues);
  for (const key of keys) {
    if (Object.hasOwn(value, key)) checkNumberInRange(value[key], issues.at(key), retriesRules[key]);
  }
}

function checkMemory(value: unknown, issues: IssueCollector): void {
  if (!checkString(value, issues)) return;
  const mib = parseMemoryMiB(value);
  if (mib === null) issues.add(`must be ${memoryRule.text}, like "512Mi" or "2Gi", got ${JSON.stringify(value)}`);
  else if (mib < memoryRule.minMiB || mib > memoryRule.maxMiB) {
    const [min, max] = [formatMemoryMiB(memoryRule.minMiB), formatMemoryMiB(memoryRule.maxMiB)];
    issues.add(`must be from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
}

function checkMethods(value: unknown, issues: IssueCollector): void {
  if (!checkArray(value, issues)) return;
  if (value.length === 0) {
    issues.add(`must list at least one of ${httpMethods.join(', ')}`);
    return;
  }
  const seen = new Map<string, number>();
  value.forEach((method, index) => {
    const at = issues.at(index);
    if (!checkString(method, at)) return;
    if ((httpMethods as readonly string[]).includes(method)) {
      const first = seen.get(method);
      if (first !== undefined) at.add(`duplicate method ${method} (also methods[${first}])`);
      else seen.set(method, index);
    } else if ((httpMethods as readonly string[]).includes(method.toUpperCase())) {
      at.add(`must be upper-case: ${JSON.stringify(method.toUpperCase())}`);
    } else {
      at.add(`unknown HTTP method ${JSON.stringify(method)}; allowed: ${httpMethods.join(', ')}`);
    }
  });
}

function checkAutoscaler(autoscaler: Plain, issues: IssueCollector): void {
  const keys = Object.keys(autoscalerRules) as AutoscalerKey[];
  checkKeys(autoscaler, keys, issues);
  const valid: Partial<Record<AutoscalerKey, number>> = {};
  for (const key of keys) {
    const value = autoscaler[key];
    if (!Object.hasOwn(autoscaler, key)) continue;
    if (checkNumberInRange(value, issues.at(key), { ...autoscalerRules[key], integer: true })) valid[key] = value;
  }
  if (valid.min_containers !== undefined && valid.max_containers !== undefined && valid.min_containers > valid.max_containers) {
    issues.add(`must not exceed max_containers (${valid.max_containers}), got ${valid.min_containers}`, 'min_containers');
  }
}
