/**
 * A deploy's dry run: what `deploy` would start, at which URLs, and what the
 * scheduler says it would do with each new unit (Nomad's plan: a new job,
 * its placements, and the placements it could not make). Nothing is
 * submitted, started, recorded or routed; images are built (or found in the
 * cache) because the job names the environment it runs.
 */
import { workloadUrl } from '../../model/urls.js';
import type { SchedulerDriver, UnitPlan } from '../../infra/scheduler/types.js';
import type { WorkloadKind } from '../../model/workload/types.js';
import type { DeploymentRef, Stage } from '../../model/deployment-keys.js';
import { publicUrl } from './live.js';
import { buildUnits, type StartContext, type UnitToStart } from './start-units.js';

export interface PlannedWorkload {
  readonly name: string;
  readonly kind: WorkloadKind;
  /** `new`: its first deploy; `new_version`: it runs now and would get its next version. */
  readonly change: 'new' | 'new_version';
  /** The stable URL it would answer at; null for functions. */
  readonly url: string | null;
  /** What the scheduler would do; null when it has nothing to plan (the local driver) or the workload gets no containers. */
  readonly job: UnitPlan | null;
}

export interface DeployPlan {
  readonly app: string;
  readonly stage: Stage;
  /** The driver that would run the workloads: `local` or `nomad`. */
  readonly scheduler: string;
  readonly workloads: readonly PlannedWorkload[];
  /** Workloads a prune would delete. */
  readonly removed: readonly string[];
}

export interface PlanInput {
  readonly ref: DeploymentRef;
  readonly baseUrl: string;
  /** The workloads deployed, in the manifest's order; `units` holds the served ones. */
  readonly targets: readonly {
    readonly name: string;
    readonly kind: WorkloadKind;
    readonly route: string | null;
    readonly deployed: boolean;
  }[];
  readonly units: readonly UnitToStart[];
  readonly removed: readonly string[];
}

export async function planDeploy(
  context: Pick<StartContext, 'images' | 'progress' | 'volumes'> & { readonly driver: SchedulerDriver },
  input: PlanInput,
): Promise<DeployPlan> {
  const { driver } = context;
  const units = driver.plan === undefined ? [] : await buildUnits(context, input.ref, input.units);
  const plans = new Map<string, UnitPlan>();
  for (const unit of units) plans.set(unit.workload.name, await driver.plan!(unit));
  return {
    app: input.ref.app,
    stage: input.ref.stage,
    scheduler: driver.name,
    workloads: input.targets.map((target) => ({
      name: target.name,
      kind: target.kind,
      change: target.deployed ? 'new_version' : 'new',
      url: target.route === null ? null : publicUrl(workloadUrl(input.baseUrl, input.ref, target.name, target.route), target.kind),
      job: plans.get(target.name) ?? null,
    })),
    removed: input.removed,
  };
}
