/**
 * Choosing the configured scaling policy and running it safely: a policy is
 * plugin code, so its answer is checked and clamped before it can start or
 * stop anything.
 */
import { SvcError } from '../../model/errors.js';
import type { RegisteredPolicy } from '../../infra/plugin/host.js';
import type { ScalingInput, ScalingPolicy } from '../../infra/plugin/types.js';
import type { DeploymentUnit } from '../../infra/scheduler/types.js';

/** The policy config `scalingPolicy` names; `config_invalid` listing the known ones when none has that name. */
export function resolvePolicy(policies: ReadonlyMap<string, RegisteredPolicy>, name: string): RegisteredPolicy {
  const policy = policies.get(name);
  if (policy) return policy;
  const known = [...policies.keys()].sort();
  throw new SvcError(
    'config_invalid',
    `scalingPolicy "${name}" is not a known scaling policy; known: ${known.length ? known.join(', ') : 'none'}.`,
    {
      hint: 'Set scalingPolicy (SVC_SCALING_POLICY) to one of them, or add the plugin that provides it to "plugins".',
      details: { setting: 'scalingPolicy', value: name, known },
    },
  );
}

export function scalingInput(unit: DeploymentUnit, load: { inFlight: number; queued: number }, current: number): ScalingInput {
  const { workload } = unit;
  const { workers, concurrency, keepWarmSeconds, autoscaler } = workload.scaling;
  return {
    workload: { app: workload.app, name: workload.name, kind: workload.kind, autoscaler, workers, concurrency, keepWarmSeconds },
    inFlight: load.inFlight,
    queued: load.queued,
    current,
  };
}

export interface Decision {
  /** Containers wanted, within [min_containers, max_containers]. */
  readonly desired: number;
  /** Set when the policy threw or answered nonsense, and `fallback` decided instead. */
  readonly error?: SvcError;
}

/**
 * Runs `policy`; a throw or an answer that is not a non-negative integer
 * becomes a `plugin_error` and `fallback` decides instead. Either way `buffer`
 * is added and the result clamped to [min_containers, max_containers].
 */
export function decide(policy: RegisteredPolicy, fallback: ScalingPolicy, input: ScalingInput, buffer = 0): Decision {
  const { minContainers, maxContainers } = input.workload.autoscaler;
  // `buffer_containers` idle ones beyond what the policy wants for the load, whatever the policy.
  const clamp = (n: number) => Math.min(maxContainers, Math.max(minContainers, n + buffer));
  let answer: unknown;
  try {
    answer = policy.decide(input);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { desired: clamp(fallback(input)), error: policyError(policy, input, `threw: ${why}`, error) };
  }
  if (typeof answer !== 'number' || !Number.isInteger(answer) || answer < 0) {
    return {
      desired: clamp(fallback(input)),
      error: policyError(policy, input, `returned ${describe(answer)}, not a non-negative integer`),
    };
  }
  return { desired: clamp(answer) };
}

function policyError(policy: RegisteredPolicy, input: ScalingInput, what: string, cause?: unknown): SvcError {
  return new SvcError(
    'plugin_error',
    `scaling policy "${policy.name}" of plugin "${policy.plugin}" ${what} (workload ${input.workload.app}/${input.workload.name}); the built-in queue-depth policy decides for it instead.`,
    {
      details: { plugin: policy.plugin, policy: policy.name },
      cause,
    },
  );
}

function describe(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (value === undefined || value === null) return String(value);
  return typeof value === 'string' ? JSON.stringify(value) : `a value of type ${typeof value}`;
}
