/**
 * `svc deployment scale <app>/<workload> --min N --max M --buffer B`: a running workload's scaling bounds
 * changed at once, without a deploy. What is given replaces the code's value, what is left out keeps the
 * value it has now; the result holds until the next deploy of the workload (records.ts keeps it, so a
 * restart of svc keeps it too), and every view says it is set by hand.
 */
import { SvcError } from '../../model/errors.js';
import { autoscalerRules, optionTable } from '../../model/workload/rules.js';
import type { ScalingSpec } from '../../model/workload/types.js';

/** What the caller changes; each left out keeps its value. */
export interface ScaleChange {
  readonly min?: number;
  readonly max?: number;
  readonly buffer?: number;
}

/** The bounds as set by hand, kept in the deployment record until the next deploy. */
export interface ScaleOverride {
  readonly minContainers: number;
  readonly maxContainers: number;
  readonly bufferContainers: number;
}

const BUFFER = optionTable.buffer_containers.rule;

/** `scaling` with the change applied; `bad_request` naming the bound when the result is not valid. */
export function scaledBy(scaling: ScalingSpec, change: ScaleChange, where: string): ScalingSpec {
  const override = overrideOf(scaling, change);
  const problems = [
    outside('--min', override.minContainers, autoscalerRules.min_containers),
    outside('--max', override.maxContainers, autoscalerRules.max_containers),
    outside('--buffer', override.bufferContainers, BUFFER),
    override.minContainers > override.maxContainers ? `--min ${override.minContainers} is above --max ${override.maxContainers}` : null,
  ].filter((problem): problem is string => problem !== null);
  if (problems.length > 0) {
    throw new SvcError('bad_request', `${where} cannot scale so: ${problems.join('; ')}.`, {
      hint: 'Give --min at most --max (each from 0 to 1000; --max at least 1), and --buffer from 0 to 1000. Nothing changed.',
      details: { ...override },
    });
  }
  return withOverride(scaling, override);
}

export function overrideOf(scaling: ScalingSpec, change: ScaleChange): ScaleOverride {
  return {
    minContainers: change.min ?? scaling.autoscaler.minContainers,
    maxContainers: change.max ?? scaling.autoscaler.maxContainers,
    bufferContainers: change.buffer ?? scaling.bufferContainers ?? 0,
  };
}

export function withOverride(scaling: ScalingSpec, override: ScaleOverride): ScalingSpec {
  const { minContainers, maxContainers, bufferContainers } = override;
  return { ...scaling, autoscaler: { ...scaling.autoscaler, minContainers, maxContainers }, bufferContainers };
}

function outside(flag: string, value: number, range: { readonly min: number; readonly max: number }): string | null {
  return Number.isInteger(value) && value >= range.min && value <= range.max
    ? null
    : `${flag} ${value} is not a whole number from ${range.min} to ${range.max}`;
}
