import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import jobsRender from '../../cli/commands/jobs-render.js';
import { packageRoot } from '../../core/model/paths.js';
import { describeFailure } from '../../core/infra/scheduler/nomad/plan.js';
import type { NomadJobRegistration, RequestedDevice } from '../../jobs/types.js';
import { validateJob } from '../../jobs/validate.js';
import { startNomadStandin, type NomadStandin } from '../standins/nomad/index.js';
import { capture } from '../cli/fixture.js';

const H100 = '(?i)^((NVIDIA|TESLA|GEFORCE|QUADRO)[^A-Za-z0-9]+)*H100([^A-Za-z0-9]|$)';

/** The rendered jobs of test/fixtures/apps/gpu_jobs.py, by workload. */
async function rendered(): Promise<Map<string, NomadJobRegistration>> {
  const run = capture({ cwd: packageRoot });
  const result = await jobsRender(run.context, path.join('test', 'fixtures', 'apps', 'gpu_jobs.py'));
  assert.notEqual(result, 1, run.stderr());
  const bodies = JSON.parse(run.stdout()) as NomadJobRegistration[];
  return new Map(bodies.map((body) => [body.Job.ID.split('--')[2]!, body]));
}

const devicesOf = (body: NomadJobRegistration): RequestedDevice[] | undefined => body.Job.TaskGroups[0]!.Tasks[0]!.Resources?.Devices;

describe('GPU workloads as Nomad jobs', function () {
  this.timeout(30_000);
  let jobs: Map<string, NomadJobRegistration>;
  let nomad: NomadStandin;
  let dataDir: string;

  before(async () => {
    jobs = await rendered();
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-gpu-nomad-'));
    nomad = await startNomadStandin({ dataDir });
  });
  after(async () => {
    await nomad?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('asks for nvidia/gpu devices: a count, a model constraint, and affinities in the order of a fallback list', () => {
    assert.deepEqual(devicesOf(jobs.get('infer')!), [
      { Name: 'nvidia/gpu', Count: 2, Constraints: [{ LTarget: '${device.model}', Operand: 'regexp', RTarget: H100 }] },
    ]);
    const [train] = devicesOf(jobs.get('train')!)!;
    assert.equal(train!.Count, 1);
    assert.deepEqual(
      train!.Constraints!.map((c) => [c.LTarget, c.Operand]),
      [['${device.model}', 'regexp']],
    );
    const anyOf = new RegExp(train!.Constraints![0]!.RTarget!.replace('(?i)', ''), 'i');
    for (const name of ['NVIDIA H100 80GB HBM3', 'NVIDIA A100-SXM4-80GB', 'NVIDIA L4']) assert.match(name, anyOf);
    for (const name of ['NVIDIA A100-PCIE-40GB', 'NVIDIA L40S', 'Tesla T4']) assert.doesNotMatch(name, anyOf);
    assert.deepEqual(
      train!.Affinities!.map((a) => a.Weight),
      [100, 50, 33],
    );
    assert.equal(train!.Affinities![0]!.RTarget, H100);
    // "any": Nomad's plugin gives whichever GPU a node has.
    assert.deepEqual(devicesOf(jobs.get('anything')!), [{ Name: 'nvidia/gpu', Count: 1 }]);
  });

  it('passes the strict validator, which refuses what Nomad would not take in a device block', () => {
    for (const body of jobs.values()) assert.deepEqual(validateJob(body), [], body.Job.ID);
    const body = structuredClone(jobs.get('infer')!);
    const device = devicesOf(body)![0]! as RequestedDevice & Record<string, unknown>;
    device.Count = 0;
    device.Vendor = 'nvidia';
    device.Constraints!.push({ LTarget: '${device.model}', Operand: 'regexp', RTarget: '(?i)(H100' });
    device.Affinities = [{ LTarget: '${device.model}', Operand: 'distinct_hosts', Weight: 0 }];
    device.Name = '';
    const issues = validateJob(body).map((issue) => `${issue.path.replace(/^.*Resources\./, '')}: ${issue.message}`);
    assert.deepEqual(issues, [
      'Devices[0].Vendor: unknown key "Vendor" in RequestedDevice: Nomad would ignore it silently',
      'Devices[0].Name: must be a device: type, vendor/type or vendor/type/name, like "nvidia/gpu"',
      'Devices[0].Count: must be at least 1 (Nomad would take 0 as 1)',
      'Devices[0].Affinities[0].Operand: must be one of "=", "==", "is", "!=", "not", "<", "<=", ">", ">=", "regexp", "version", "semver", "set_contains", "set_contains_all", "set_contains_any", "is_set", "is_not_set", not "distinct_hosts"',
      'Devices[0].Affinities[0].Weight: must be between -100 and 100 and not 0',
      'Devices[0].Constraints[1].RTarget: is not a regular expression: Invalid regular expression: /(H100/i: Unterminated group',
    ]);
  });

  it("is taken by the Nomad stand-in's strict decoding and its plan", async () => {
    for (const body of jobs.values()) {
      const answer = await fetch(`${nomad.url}/v1/job/${encodeURIComponent(body.Job.ID)}/plan`, {
        method: 'POST',
        body: JSON.stringify({ Job: body.Job, Diff: true }),
      });
      assert.equal(answer.status, 200, await answer.text());
    }
  });

  it('says why a cold start cannot be placed as Nomad reports it: no node with the model, or its GPUs all taken', () => {
    // An evaluation's FailedTGAllocs in Nomad's shape (scheduler/feasible: "missing devices", rank.go: "devices: …").
    const missing = describeFailure('infer', {
      NodesEvaluated: 3,
      NodesFiltered: 3,
      NodesExhausted: 0,
      ConstraintFiltered: { 'missing devices': 3 },
    });
    assert.equal(
      missing,
      'group infer cannot be placed: 3 nodes evaluated, 3 filtered, 0 exhausted; constraint missing devices: 3 nodes; no node has the GPUs its gpu= asks for (docs/gpus.md#on-nomad)',
    );
    const exhausted = describeFailure('infer', {
      NodesEvaluated: 1,
      NodesFiltered: 0,
      NodesExhausted: 1,
      DimensionExhausted: { 'devices: no devices match request': 1 },
    });
    assert.match(exhausted, /exhausted devices: no devices match request: 1 node; its GPUs are all in use or no node has enough of them/);
  });
});
