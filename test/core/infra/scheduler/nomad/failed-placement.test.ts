/**
 * failedPlacement (plan.ts): which of a job's evaluations says why Nomad cannot place a group, read by
 * the scale path and the volume keepers. Evaluations in the shape `GET /v1/job/:id/evaluations` lists
 * them (the real agents' answers are exercised in test/cluster/workloads and csi-volumes).
 */
import assert from 'node:assert/strict';
import { failedPlacement, type NomadEvaluation } from '../../../../../core/infra/scheduler/nomad/plan.js';

const exhausted = (nodes: number) => ({
  NodesEvaluated: nodes,
  NodesFiltered: 0,
  NodesExhausted: nodes,
  DimensionExhausted: { memory: nodes },
});

describe('failedPlacement', () => {
  const evaluations: NomadEvaluation[] = [
    { ModifyIndex: 10, Status: 'complete', FailedTGAllocs: { keeper: exhausted(1) } },
    { ModifyIndex: 30, Status: 'complete', FailedTGAllocs: { keeper: exhausted(3) } },
    { ModifyIndex: 20, Status: 'complete', FailedTGAllocs: { keeper: exhausted(2) } },
    { ModifyIndex: 31, Status: 'blocked', FailedTGAllocs: null },
  ];

  it('says the newest failure of the group at or after the index, in Nomad words', () => {
    assert.equal(
      failedPlacement(evaluations, 'keeper', 15),
      'group keeper cannot be placed: 3 nodes evaluated, 0 filtered, 3 exhausted; exhausted memory: 3 nodes',
    );
  });

  it('ignores failures before the index, and those of other groups', () => {
    assert.equal(failedPlacement(evaluations, 'keeper', 32), null);
    assert.equal(failedPlacement(evaluations, 'web', 0), null);
    assert.equal(failedPlacement([], 'keeper', 0), null);
  });
});
