import assert from 'node:assert/strict';
import { SvcError } from '../../core/model/errors.js';
import { compileJob } from '../../jobs/compile.js';
import { compilePeriodicJob, nomadCronSpec } from '../../jobs/periodic.js';
import { formatIssues, validateJob } from '../../jobs/validate.js';
import { jobContext, workload } from './fixtures.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const scheduled = (schedule: NonNullable<ReturnType<typeof workload>['schedule']>) => workload('function', { schedule });
const periodicJob = (): Json =>
  JSON.parse(JSON.stringify(compilePeriodicJob(scheduled({ cron: '0 3 * * *', timezone: 'Europe/Paris', overlap: false }), jobContext())));

describe('a scheduled function on Nomad: a periodic batch job', () => {
  it('compiles to a batch job with a cron Periodic block that runs the function once per tick, and passes the strict validator', () => {
    const body = periodicJob();
    assert.deepEqual(validateJob(body), [], formatIssues(validateJob(body)));
    const { Job } = body;
    assert.equal(Job.Type, 'batch');
    assert.equal(Job.ID, 'svc-default--shop--square');
    assert.deepEqual(Job.Periodic, { Enabled: true, SpecType: 'cron', Spec: '0 3 * * *', TimeZone: 'Europe/Paris', ProhibitOverlap: true });
    assert.equal(Job.Meta.svc_schedule, 'cron 0 3 * * * (Europe/Paris)');
    const task = Job.TaskGroups[0].Tasks[0];
    assert.deepEqual(task.Config.args.slice(0, 3), ['-m', 'svc.runtime', 'once']);
    assert.deepEqual(task.Config.args.slice(-2), ['--workload', 'square']);
    assert.equal(task.Services, undefined, 'a run serves nothing');
    assert.equal(Job.TaskGroups[0].Networks, undefined);
    assert.equal(Job.TaskGroups[0].RestartPolicy.Attempts, 0, 'a failed run is not retried in place');
    assert.equal('SVC_WORKER_PORTS' in task.Env, false);
    const overlapping = compilePeriodicJob(scheduled({ every: 60, overlap: true }), jobContext());
    assert.equal(overlapping.Job.Periodic?.ProhibitOverlap, false);
    assert.equal(
      overlapping.Job.Meta?.svc_schedule,
      'every 60s, overlapping runs allowed',
      'the meta says the schedule as svc says it everywhere',
    );
  });

  it("gives a run the image's variables too", () => {
    const image = { ...workload('function').image, env: { HF_HOME: '/tmp/hf' } };
    const body = compilePeriodicJob(workload('function', { image, schedule: { every: 60, overlap: false } }), jobContext());
    const env = body.Job.TaskGroups[0]!.Tasks[0]!.Env!;
    assert.equal(env.HF_HOME, '/tmp/hf');
    assert.equal(env.SVC_WORKLOAD, 'square');
  });

  it('writes a period as the cron spec with seconds that runs it, and refuses one no cron spec writes', () => {
    const every = (seconds: number) => nomadCronSpec({ every: seconds, overlap: false });
    assert.deepEqual([1, 15, 30, 60, 600, 1800, 3600, 21_600, 86_400].map(every), [
      '* * * * * * *',
      '*/15 * * * * * *',
      '*/30 * * * * * *',
      '0 */1 * * * * *',
      '0 */10 * * * * *',
      '0 */30 * * * * *',
      '0 0 */1 * * * *',
      '0 0 */6 * * * *',
      '0 0 0 * * * *',
    ]);
    for (const seconds of [7, 90, 7 * 60, 5 * 3600, 2 * 86_400]) {
      assert.throws(
        () => every(seconds),
        (error: unknown) => error instanceof SvcError && error.code === 'manifest_invalid' && error.message.includes(`${seconds} seconds`),
        String(seconds),
      );
    }
    for (const seconds of [1, 15, 600, 21_600, 86_400]) {
      const body = compilePeriodicJob(scheduled({ every: seconds, overlap: false }), jobContext());
      assert.deepEqual(validateJob(body), [], `every ${seconds}s: ${formatIssues(validateJob(body))}`);
    }
  });

  /** [rule, how to break it, the path the issue must name, what its message says]. */
  const broken: [string, (body: Json) => void, string, RegExp][] = [
    ['Periodic only on batch jobs', (b) => (b.Job.Type = 'service'), 'Job.Periodic', /only allowed on batch/],
    ['a spec is required', (b) => delete b.Job.Periodic.Spec, 'Job.Periodic.Spec', /Must specify a spec/],
    ['not both Spec and Specs', (b) => (b.Job.Periodic.Specs = ['0 4 * * *']), 'Job.Periodic', /Only cron or crons/],
    ['SpecType is cron', (b) => (b.Job.Periodic.SpecType = 'test'), 'Job.Periodic.SpecType', /"cron"/],
    ['a cron field out of range', (b) => (b.Job.Periodic.Spec = '61 3 * * *'), 'Job.Periodic.Spec', /not a cron spec Nomad reads: .*61/],
    ['a cron spec with 4 fields', (b) => (b.Job.Periodic.Spec = '0 3 * *'), 'Job.Periodic.Spec', /4 fields/],
    [
      'each of Specs is checked',
      (b) => {
        delete b.Job.Periodic.Spec;
        b.Job.Periodic.Specs = ['0 3 * * *', '0 3 * * zz'];
      },
      'Job.Periodic.Specs[1]',
      /not a cron spec/,
    ],
    ['a time zone Nomad can load', (b) => (b.Job.Periodic.TimeZone = 'Mars/Base'), 'Job.Periodic.TimeZone', /not a time zone/],
    ['ProhibitOverlap is a bool', (b) => (b.Job.Periodic.ProhibitOverlap = 'yes'), 'Job.Periodic.ProhibitOverlap', /boolean|bool/],
    ['unknown Periodic keys are refused', (b) => (b.Job.Periodic.Cron = '0 3 * * *'), 'Job.Periodic.Cron', /unknown key/],
  ];
  for (const [rule, breakIt, path, message] of broken) {
    it(`the strict validator refuses a malformed Periodic block: ${rule}`, () => {
      const body = periodicJob();
      breakIt(body);
      const issues = validateJob(body);
      assert.ok(
        issues.some((issue) => issue.path === path && message.test(issue.message)),
        `expected ${path} ${message}, got:\n${formatIssues(issues)}`,
      );
    });
  }

  it('a service job still has no Periodic block', () => {
    assert.equal(compileJob(workload('endpoint'), jobContext()).Job.Periodic, undefined);
  });
});
