/** Small helpers and shared rules of the validator's semantic checks. */
import { isObject } from './validate-shape.js';
import type { JobIssue } from './types.js';

export type Obj = Record<string, unknown>;
export type Report = (path: string, message: string) => void;

export function reporter(issues: JobIssue[]): Report {
  return (path, message) => void issues.push({ path, message });
}

export const obj = (value: unknown): Obj | undefined => (isObject(value) ? value : undefined);
export const list = (value: unknown): Obj[] => (Array.isArray(value) ? value.filter(isObject) : []);
export const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
export const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

export const SECOND_NS = 1_000_000_000;
export const showDuration = (ns: number): string => (ns % SECOND_NS === 0 ? `${ns / SECOND_NS}s` : `${ns}ns`);

export function oneOf(report: Report, path: string, value: unknown, allowed: readonly string[]): void {
  if (typeof value === 'string' && !allowed.includes(value))
    report(path, `must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}, not ${JSON.stringify(value)}`);
}

/**
 * Consul's service Meta rules (hashicorp/consul agent/structs/structs.go),
 * applied to the job's Meta too so one map serves both: ≤ 64 pairs, keys
 * `^[a-zA-Z0-9_-]+$` of ≤ 128 characters without the reserved `consul-`
 * prefix, values ≤ 512 characters.
 */
export function checkConsulMeta(report: Report, path: string, meta: unknown): void {
  const map = obj(meta);
  if (map === undefined) return;
  const keys = Object.keys(map);
  if (keys.length > 64) report(path, `has ${keys.length} keys; Consul allows at most 64`);
  for (const key of keys) {
    if (!/^[a-zA-Z0-9_-]+$/.test(key))
      report(
        `${path}.${key}`,
        'Meta keys may hold only letters, digits, "_" and "-" (Consul refuses others; the Nomad UI splits keys at dots)',
      );
    else if (key.length > 128) report(`${path}.${key}`, `key is ${key.length} characters long; Consul allows 128`);
    else if (key.toLowerCase().startsWith('consul-')) report(`${path}.${key}`, 'the "consul-" key prefix is reserved by Consul');
    const value = map[key];
    if (typeof value === 'string' && value.length > 512)
      report(`${path}.${key}`, `value is ${value.length} characters long; Consul allows 512`);
  }
}

/** Update strategy rules of `structs.UpdateStrategy.Validate`. */
export function checkUpdate(report: Report, path: string, value: unknown): void {
  const update = obj(value);
  if (update === undefined) return;
  oneOf(report, `${path}.HealthCheck`, update.HealthCheck, ['checks', 'task_states', 'manual']);
  const parallel = num(update.MaxParallel);
  if (parallel !== undefined && parallel < 0) report(`${path}.MaxParallel`, 'must be 0 or more');
  const stagger = num(update.Stagger);
  if (stagger !== undefined && stagger <= 0) report(`${path}.Stagger`, 'must be greater than 0');
  const canary = num(update.Canary);
  if (canary !== undefined && canary < 0) report(`${path}.Canary`, 'must be 0 or more');
  const min = num(update.MinHealthyTime);
  const healthy = num(update.HealthyDeadline);
  const progress = num(update.ProgressDeadline);
  if (min !== undefined && healthy !== undefined && healthy > 0 && min >= healthy) {
    report(`${path}.MinHealthyTime`, `must be less than HealthyDeadline (${showDuration(min)} ≥ ${showDuration(healthy)})`);
  }
  if (healthy !== undefined && progress !== undefined && progress > 0 && healthy >= progress) {
    report(`${path}.HealthyDeadline`, `must be less than ProgressDeadline (${showDuration(healthy)} ≥ ${showDuration(progress)})`);
  }
}

export const constraintOperands = [
  '=',
  '==',
  'is',
  '!=',
  'not',
  '<',
  '<=',
  '>',
  '>=',
  'regexp',
  'version',
  'semver',
  'set_contains',
  'set_contains_all',
  'set_contains_any',
  'is_set',
  'is_not_set',
  'distinct_hosts',
  'distinct_property',
] as const;

/** Constraints, affinities and spreads at one level; `distinct_*` only above the task. */
export function checkPlacement(report: Report, path: string, level: Obj, atTask: boolean): void {
  list(level.Constraints).forEach((constraint, index) => {
    const at = `${path}.Constraints[${index}]`;
    oneOf(report, `${at}.Operand`, constraint.Operand ?? '=', constraintOperands);
    const operand = str(constraint.Operand);
    if (atTask && (operand === 'distinct_hosts' || operand === 'distinct_property'))
      report(`${at}.Operand`, `${operand} is not allowed on a task; put it on the group or the job`);
    if (operand !== 'distinct_hosts' && str(constraint.LTarget) === undefined) report(`${at}.LTarget`, 'is required');
  });
  list(level.Affinities).forEach((affinity, index) => {
    const at = `${path}.Affinities[${index}]`;
    oneOf(
      report,
      `${at}.Operand`,
      affinity.Operand ?? '=',
      constraintOperands.filter((o) => !o.startsWith('distinct_')),
    );
    const weight = num(affinity.Weight);
    if (weight !== undefined && (weight < -100 || weight > 100 || weight === 0))
      report(`${at}.Weight`, 'must be between -100 and 100 and not 0');
  });
  list(level.Spreads).forEach((spread, index) => {
    const at = `${path}.Spreads[${index}]`;
    if (!str(spread.Attribute)) report(`${at}.Attribute`, 'is required');
    const weight = num(spread.Weight);
    if (weight !== undefined && (weight < 0 || weight > 100)) report(`${at}.Weight`, 'must be between 0 and 100');
  });
}
