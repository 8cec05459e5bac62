/**
 * Scheduled functions through the Nomad stand-in: the leader registers one
 * periodic batch job per scheduled function (compiled, checked by the strict
 * validator), the stand-in launches a child job per tick as Nomad does, and
 * svc reads the runs back from the children and their allocations; a
 * redeploy without the schedule purges the periodic job. A function naming
 * secrets gets them from the Nomad Variable of its periodic job, which its
 * children read (their identity is their parent's); the job holds no value.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { until } from '../helpers/until.js';
import { nomadJson, startStandins, type Standins } from './cluster-helpers.js';
import { scheduledRuns, scheduleFixture, secretLines, type ScheduleFixture } from './schedule-helpers.js';

describe('scheduled functions on Nomad (stand-ins): periodic batch jobs', function () {
  this.timeout(180_000);
  let standins: Standins;
  let platform: Platform | undefined;
  let call: Call;
  let owner: string;
  let fixture: ScheduleFixture;
  const reports: unknown[] = [];
  const parent = 'svc-default--sched--tick';

  before(async () => {
    standins = await startStandins();
    platform = await startPlatform({ config: standins.config(), report: (error) => reports.push(error) });
    await until('svc leads', () => platform!.role === 'ready');
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    fixture = await scheduleFixture(platform.url, owner);
  });
  after(async () => {
    await platform?.close();
    await standins?.close();
  });

  it('registers a periodic batch job whose children run the function on its ticks; the runs come back with their logs', async () => {
    const deployed = await call('POST', '/api/v1/apps/sched/deployments', { token: owner, json: fixture.body(['tick']) });
    assert.equal(deployed.status, 201, deployed.text);
    const job = await until('the periodic job is registered', async () => {
      const read = await nomadJson(standins.nomad, `/v1/job/${parent}`);
      return read.status === 200 ? read.json : null;
    });
    assert.equal(job.Type, 'batch');
    const { Enabled, SpecType, Spec, TimeZone, ProhibitOverlap } = job.Periodic;
    assert.deepEqual(
      { Enabled, SpecType, Spec, TimeZone, ProhibitOverlap },
      { Enabled: true, SpecType: 'cron', Spec: '* * * * * * *', TimeZone: 'UTC', ProhibitOverlap: true },
    );
    const listed = (await nomadJson(standins.nomad, `/v1/jobs?prefix=${parent}`)).json as {
      ID: string;
      Periodic: boolean;
      ParentID: string;
    }[];
    assert.equal(listed.find((j) => j.ID === parent)?.Periodic, true);

    const succeeded = await until(
      'tick succeeded twice',
      async () => {
        const { runs } = await scheduledRuns(call, owner);
        const done = runs.filter((run) => run.status === 'succeeded');
        return done.length >= 2 ? done : null;
      },
      90_000,
    );
    assert.ok(fixture.lines('tick').length >= 2, 'each run appended its line');
    const children = (await nomadJson(standins.nomad, `/v1/jobs?prefix=${parent}/periodic-`)).json as { ID: string; ParentID: string }[];
    assert.ok(
      children.length >= 2 && children.every((child) => child.ParentID === parent && /\/periodic-\d+$/.test(child.ID)),
      JSON.stringify(children),
    );
    for (const run of succeeded) assert.ok(run.startedAt !== null && run.endedAt !== null, JSON.stringify(run));
    const one = await call('GET', `/api/v1/apps/sched/runs/${succeeded[0]!.id}`, { token: owner });
    assert.equal(one.status, 200, one.text);
    assert.ok(
      one.json.run.logs.some((line: { text: string }) => line.text === 'tick ran'),
      JSON.stringify(one.json.run.logs),
    );
  });

  it('refuses, before anything changes, a period no cron spec writes (manifest_invalid naming the function and the option)', async () => {
    const refused = await call('POST', '/api/v1/apps/sched/deployments', {
      token: owner,
      json: fixture.body(['tick'], (w) => (w.options.schedule = { every: 7, overlap: false })),
    });
    assert.equal(refused.status, 422, refused.text);
    assert.equal(refused.json.error.code, 'manifest_invalid');
    assert.match(refused.json.error.message, /^tick: a period of 7 seconds cannot run on Nomad/);
    assert.deepEqual(
      refused.json.error.details.issues.map((issue: { path: string }) => issue.path),
      ['workloads[0].options.schedule.every'],
    );
    const job = (await nomadJson(standins.nomad, `/v1/job/${parent}`)).json;
    assert.equal(job.Periodic.Spec, '* * * * * * *', 'the deployed schedule is untouched');
  });

  it('purges the periodic job when a redeploy removes the schedule', async () => {
    const redeployed = await call('POST', '/api/v1/apps/sched/deployments', {
      token: owner,
      json: fixture.body(['tick'], (w) => (w.options.schedule = null)),
    });
    assert.equal(redeployed.status, 201, redeployed.text);
    await until('the periodic job is gone', async () => (await nomadJson(standins.nomad, `/v1/job/${parent}`)).status === 404);
    assert.deepEqual(reports, []);
  });

  it("gives a scheduled function its secrets through the periodic job's Variable, which its children read; the job holds none, the purge deletes it", async () => {
    const value = `sched-${randomBytes(8).toString('hex')}`;
    assert.equal(
      (await call('POST', '/api/v1/secrets', { token: owner, json: { name: 'sched-secret', values: { SCHED_SECRET: value } } })).status,
      201,
    );
    const deployed = await call('POST', '/api/v1/apps/sched/deployments', { token: owner, json: fixture.body(['secret-tick']) });
    assert.equal(deployed.status, 201, deployed.text);
    const read = await until('a child of the periodic job read the secrets', () => secretLines(fixture)[0], 90_000);
    assert.equal(read, `${value} inline # value`);

    const listed = (await nomadJson(standins.nomad, '/v1/jobs?prefix=svc-default--sched--')).json as { ID: string; ParentID: string }[];
    const periodic = listed.find((job) => job.ParentID === '')!.ID;
    const job = (await nomadJson(standins.nomad, `/v1/job/${periodic}`)).json;
    assert.ok(!JSON.stringify(job).includes(value) && !JSON.stringify(job).includes('inline # value'), 'the periodic job holds no value');
    assert.equal(
      job.TaskGroups[0].Tasks[0].Templates[0].EmbeddedTmpl,
      `{{ with nomadVar "nomad/jobs/${periodic}" }}{{ range .Tuples }}{{ .K }}={{ .V | toJSON }}\n{{ end }}{{ end }}`,
    );
    assert.deepEqual((await nomadJson(standins.nomad, `/v1/var/nomad/jobs/${periodic}`)).json.Items, {
      SCHED_SECRET: value,
      SCHED_INLINE: 'inline # value',
    });
    assert.ok(
      listed.some((child) => child.ParentID === periodic),
      'the value was read by a child job',
    );

    const redeployed = await call('POST', '/api/v1/apps/sched/deployments', {
      token: owner,
      json: fixture.body(['secret-tick'], (w) => (w.options.schedule = null)),
    });
    assert.equal(redeployed.status, 201, redeployed.text);
    await until('the periodic job is gone', async () => (await nomadJson(standins.nomad, `/v1/job/${periodic}`)).status === 404);
    await until('its Variable is gone', async () => (await nomadJson(standins.nomad, `/v1/var/nomad/jobs/${periodic}`)).status === 404);
    assert.deepEqual(reports, []);
  });
});
