/**
 * Nomad's answer to `POST /v1/job/:id/plan` (`api/jobs.go` JobPlanResponse),
 * summed up as the driver's UnitPlan: whether the job is new or changes,
 * what the scheduler would place, stop or update, and why it could not
 * place an allocation (`FailedTGAllocs`, Nomad's AllocationMetric).
 */
import type { UnitPlan } from '../types.js';

export interface AllocationMetric {
  NodesEvaluated?: number;
  NodesFiltered?: number;
  NodesExhausted?: number;
  NodesAvailable?: Record<string, number> | null;
  ClassFiltered?: Record<string, number> | null;
  ConstraintFiltered?: Record<string, number> | null;
  ClassExhausted?: Record<string, number> | null;
  DimensionExhausted?: Record<string, number> | null;
  QuotaExhausted?: string[] | null;
  CoalescedFailures?: number;
}

/** An evaluation as `GET /v1/job/:id/evaluations` lists it: what svc reads of one. */
export interface NomadEvaluation {
  readonly ModifyIndex: number;
  /** `blocked`: Nomad waits for room to place what it could not (it places it when room appears). */
  readonly Status?: string;
  readonly FailedTGAllocs?: Record<string, AllocationMetric> | null;
}

export interface NomadPlanResponse {
  Diff?: { Type?: string } | null;
  Annotations?: { DesiredTGUpdates?: Record<string, Record<string, number>> | null } | null;
  FailedTGAllocs?: Record<string, AllocationMetric> | null;
  Warnings?: string;
}

const CHANGE: Record<string, UnitPlan['change']> = { Added: 'create', Edited: 'update', None: 'none' };

export function summarizePlan(id: string, plan: NomadPlanResponse): UnitPlan {
  const placements: Record<string, number> = {};
  for (const updates of Object.values(plan.Annotations?.DesiredTGUpdates ?? {})) {
    for (const [action, count] of Object.entries(updates)) {
      if (count > 0) {
        const key = action[0]!.toLowerCase() + action.slice(1);
        placements[key] = (placements[key] ?? 0) + count;
      }
    }
  }
  const failures = Object.entries(plan.FailedTGAllocs ?? {}).map(([group, metric]) => describeFailure(group, metric));
  const warnings = (plan.Warnings ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  return { id, change: CHANGE[plan.Diff?.Type ?? ''] ?? 'update', placements, failures, warnings };
}

/**
 * Why Nomad could not place `group` in the newest evaluation modified at or after `sinceIndex` that
 * failed to (one made by a registration or scale at that index, or later), or null when none failed.
 */
export function failedPlacement(evaluations: readonly NomadEvaluation[], group: string, sinceIndex: number): string | null {
  const newestFirst = [...evaluations].sort((a, b) => b.ModifyIndex - a.ModifyIndex);
  const failed = newestFirst.find((evaluation) => evaluation.ModifyIndex >= sinceIndex && evaluation.FailedTGAllocs?.[group]);
  return failed === undefined ? null : describeFailure(group, failed.FailedTGAllocs![group]!);
}

/** Why Nomad could not place an allocation of `group`, from its AllocationMetric (a plan's or an evaluation's `FailedTGAllocs`). */
export function describeFailure(group: string, metric: AllocationMetric): string {
  const reasons: string[] = [];
  const counted = (label: string, map: Record<string, number> | null | undefined) => {
    for (const [name, count] of Object.entries(map ?? {})) reasons.push(`${label} ${name}: ${count} node${count === 1 ? '' : 's'}`);
  };
  counted('constraint', metric.ConstraintFiltered);
  counted('node class', metric.ClassFiltered);
  counted('exhausted', metric.DimensionExhausted);
  for (const quota of metric.QuotaExhausted ?? []) reasons.push(`quota ${quota}`);
  const evaluated = metric.NodesEvaluated ?? 0;
  const more = metric.CoalescedFailures ? ` (and ${metric.CoalescedFailures} more like it)` : '';
  const summary =
    evaluated === 0
      ? "no node in the job's datacenters is ready"
      : `${evaluated} node${evaluated === 1 ? '' : 's'} evaluated, ${metric.NodesFiltered ?? 0} filtered, ${metric.NodesExhausted ?? 0} exhausted`;
  return `group ${group} cannot be placed${more}: ${summary}${reasons.length ? `; ${reasons.join(', ')}` : ''}${gpuHint(metric)}`;
}

/** A device filter or exhaustion in Nomad's words, said for GPUs (the only devices svc asks for). */
function gpuHint(metric: AllocationMetric): string {
  if (Object.keys(metric.DimensionExhausted ?? {}).some((dimension) => dimension.startsWith('devices'))) {
    return '; its GPUs are all in use or no node has enough of them (docs/gpus.md#on-nomad)';
  }
  if (Object.hasOwn(metric.ConstraintFiltered ?? {}, 'missing devices')) {
    return '; no node has the GPUs its gpu= asks for (docs/gpus.md#on-nomad)';
  }
  return '';
}
