/**
 * What the replay compares of each kind of answer (replay.test.ts): the
 * levels svc reads of the larger ones (core/infra/scheduler/nomad/driver.ts,
 * watcher.ts, plan.ts, types.ts; core/infra/state/consul-client.ts `HealthEntry`),
 * and where the stand-ins cannot reach the state the real agents were in,
 * what is left out and why.
 */
import type { Expectation } from './compare.js';
import type { Answer } from './ids.js';

/**
 * AllocationStub. The stand-in fails svc's exec tasks (it has no exec driver), so a task's start, restarts
 * and end, and an allocation's deployment health, cannot be reached as the agent reached them: only
 * their form is compared (null on one side is a state, not a difference).
 */
const ALLOCATION_STUBS: Expectation = {
  levels: ['[]', '[].DeploymentStatus', '[].TaskStates.*', '[].TaskStates.*.Events[]'],
  stateful: [
    '[].DeploymentStatus',
    '[].TaskStates',
    '[].TaskStates.*.StartedAt',
    '[].TaskStates.*.FinishedAt',
    '[].TaskStates.*.LastRestart',
  ],
};
/** Evaluation is `_struct omitempty`: a failed placement, a blocked or follow-up evaluation, a plan not yet run each add or drop fields. */
const EVALUATION: Expectation = {
  optional: [
    'StatusDescription',
    'FailedTGAllocs',
    'BlockedEval',
    'NextEval',
    'PreviousEval',
    'PlanAnnotations',
    'QueuedAllocations',
    'SnapshotIndex',
    'Wait',
    'WaitUntil',
  ],
};

/** Per kind; a kind not listed is compared whole. */
export const EXPECT: Record<string, Expectation> = {
  // unitOf, readModifyIndex: JobModifyIndex and the names of the group and its first task.
  'GET /v1/job/:id': { levels: ['', 'TaskGroups[]', 'TaskGroups[].Tasks[]'] },
  'GET /v1/job/:id/allocations': ALLOCATION_STUBS,
  'GET /v1/job/:id/allocations (blocking)': ALLOCATION_STUBS,
  // The watcher reads the ports. Allocation is `_struct omitempty`: which of its fields are there follows its state.
  'GET /v1/allocation/:id': {
    levels: ['', 'AllocatedResources', 'AllocatedResources.Shared', 'AllocatedResources.Shared.Ports[]'],
    optional: [
      'ClientDescription',
      'DesiredDescription',
      'DesiredTransition',
      'TaskStates',
      'AllocStates',
      'PreviousAllocation',
      'NextAllocation',
      'DeploymentID',
      'DeploymentStatus',
      'RescheduleTracker',
      'NetworkStatus',
      'FollowupEvalID',
      'PreemptedAllocations',
      'PreemptedByAllocation',
    ],
  },
  // placementFailure: Status and FailedTGAllocs. Evaluation is `_struct omitempty` too.
  'GET /v1/evaluation/:id': EVALUATION,
  'GET /v1/evaluation/:id (blocking)': EVALUATION,
  // A job's evaluations are the same structs (the stand-in runs a scale's evaluation at once, the agent had it pending).
  'GET /v1/job/:id/evaluations': { levels: ['[]'], optional: EVALUATION.optional!.map((field) => `[].${field}`) },
  'GET /v1/job/:id/evaluations (blocking)': { levels: ['[]'], optional: EVALUATION.optional!.map((field) => `[].${field}`) },
  // purgeUnknownJobs: ID and Meta of each stub.
  'GET /v1/jobs?meta&prefix': { levels: ['[]'] },
  // summarizePlan; the stand-in's diff is Nomad's shape, not field for field (README).
  'POST /v1/job/:id/plan': { levels: ['', 'Diff', 'Annotations', 'Annotations.DesiredTGUpdates.*'] },
  'GET /v1/job/:id/scale': { levels: ['', 'TaskGroups.*', 'TaskGroups.*.Events[]'] },
  // HealthEntry: Node.Address, Service.ID/Service/Address/Port/Meta.
  'GET /v1/health/service/:name?passing': { levels: ['[]', '[].Node', '[].Service'] },
  'GET /v1/health/service/:name?passing (blocking)': { levels: ['[]', '[].Node', '[].Service'] },
};

/**
 * Answers a stand-in gives for a state it cannot reach, where the agent answered 2xx: svc's exec tasks never start
 * on the Nomad stand-in (it has no exec driver), so their logs are "not started yet" there. Counted, not compared.
 */
const UNREACHABLE: Record<string, { readonly status: number; readonly text: RegExp }> = {
  'GET /v1/client/fs/logs/:alloc?offset&origin&plain&task&type': { status: 404, text: /^task ".+" not started yet\. No logs available$/ },
};

/** Whether the stand-in's answer stands for a state it cannot reach (counted, not compared). */
export function unreachable(kind: string, recorded: Answer, replayed: Answer): boolean {
  const state = UNREACHABLE[kind];
  return (
    state !== undefined &&
    recorded.status < 300 &&
    replayed.status === state.status &&
    replayed.body !== undefined &&
    'text' in replayed.body &&
    state.text.test(replayed.body.text)
  );
}
