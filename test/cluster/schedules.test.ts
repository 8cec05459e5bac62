/**
 * Scheduled functions on real Nomad and Consul (opt-in: `npm run test:cluster`):
 * each compiles to a periodic batch job that Nomad accepts and runs on its
 * ticks (a child job per tick, `ProhibitOverlap`), the runs and their logs
 * come back through `svc app runs`, a failure is recorded failed, a function
 * naming a secret reads it in each child job (its template reads the periodic
 * job's Variable with the child's workload identity, whose job is the parent),
 * and a redeploy without the schedules purges the periodic jobs and the Variable.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import { until } from '../helpers/until.js';
import { NAMESPACE } from './agents.js';
import { useCluster } from './suite.js';
import { SvcServer, svcCli } from './svc-process.js';

const fixture = path.join(packageRoot, 'test', 'fixtures', 'cluster-schedules');

interface Runs {
  readonly schedules: { function: string }[];
  readonly runs: { id: string; function: string; status: string; error: { message: string } | null }[];
}

describe('svc on real Nomad and Consul: scheduled functions', function () {
  this.timeout(600_000);
  const cluster = useCluster(this);
  let server: SvcServer;
  const secret = `sched-${randomBytes(10).toString('hex')}`;
  let secretJob = '';

  const runs = async (): Promise<Runs> => {
    const ran = await svcCli(server, ['app', 'runs', 'sched', '--json']);
    assert.equal(ran.code, 0, ran.stderr);
    return JSON.parse(ran.stdout) as Runs;
  };
  const periodicJobs = async () => {
    const c = await cluster();
    const jobs = (await c.nomadGet(`/v1/jobs?namespace=${NAMESPACE}&meta=true`)) as {
      ID: string;
      ParentID: string;
      Type: string;
      Periodic: boolean;
      Meta: Record<string, string> | null;
    }[];
    return jobs.filter((job) => job.Meta?.svc_app === 'sched' && job.Periodic);
  };

  before(async () => {
    server = await SvcServer.serving((await cluster()).svcEnv());
  });
  after(async () => {
    await server?.stop();
  });

  it('registers a periodic batch job per scheduled function, which Nomad runs on its ticks; runs and logs come back through svc app runs', async () => {
    const created = await svcCli(server, ['secret', 'create', 'sched-secret', `SCHED_SECRET=${secret}`]);
    assert.equal(created.code, 0, created.stderr);
    const deployed = await svcCli(server, ['deploy', path.join(fixture, 'app.py'), '--json']);
    assert.equal(deployed.code, 0, `${deployed.stdout}\n${deployed.stderr}\n${server.output.slice(-3000)}`);
    const c = await cluster();
    const jobs = await until(
      'the three periodic jobs are registered',
      async () => ((await periodicJobs()).length === 3 ? periodicJobs() : null),
      60_000,
    );
    const tick = jobs.find((job) => job.Meta?.svc_workload === 'tick')!;
    const spec = (await c.nomadGet(`/v1/job/${encodeURIComponent(tick.ID)}?namespace=${NAMESPACE}`)) as {
      Type: string;
      Periodic: Record<string, unknown>;
    };
    assert.equal(spec.Type, 'batch');
    assert.deepEqual(
      { ...spec.Periodic },
      { ...spec.Periodic, Enabled: true, SpecType: 'cron', Spec: '*/5 * * * * * *', TimeZone: 'UTC', ProhibitOverlap: true },
    );

    const done = await until(
      'tick succeeded twice',
      async () => {
        const answer = await runs();
        return answer.runs.filter((run) => run.function === 'tick' && run.status === 'succeeded').length >= 2 ? answer : null;
      },
      { timeoutMs: 240_000, intervalMs: 2000, context: () => server.output.slice(-2000) },
    );
    const ids = done.runs.map((run) => run.id);
    assert.equal(new Set(ids).size, ids.length, 'one run per tick');
    const one = done.runs.find((run) => run.function === 'tick' && run.status === 'succeeded')!;
    const logs = await svcCli(server, ['app', 'runs', 'sched', '--logs', one.id]);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /tick ran on Nomad/);
  });

  it('records a run whose function raised as failed', async () => {
    const failed = await until(
      'boom failed once',
      async () => (await runs()).runs.find((run) => run.function === 'boom' && run.status === 'failed'),
      { timeoutMs: 180_000, intervalMs: 2000 },
    );
    const logs = await svcCli(server, ['app', 'runs', 'sched', '--logs', failed.id]);
    assert.match(logs.stdout, /ValueError: scheduled failure on Nomad/);
  });

  it("gives a scheduled function its secret in each child job, through the periodic job's Variable; the job holds no value", async () => {
    const c = await cluster();
    secretJob = (await periodicJobs()).find((job) => job.Meta?.svc_workload === 'secret-tick' && !job.ParentID)!.ID;
    const spec = await c.nomadGet(`/v1/job/${encodeURIComponent(secretJob)}?namespace=${NAMESPACE}`);
    assert.ok(!JSON.stringify(spec).includes(secret), 'the periodic job holds no value');
    assert.match(spec.TaskGroups[0].Tasks[0].Templates[0].EmbeddedTmpl, new RegExp(`nomadVar "nomad/jobs/${secretJob}"`));
    const variable = await c.nomadGet(`/v1/var/nomad/jobs/${secretJob}?namespace=${NAMESPACE}`);
    assert.deepEqual(Object.keys(variable.Items), ['SCHED_SECRET']);
    const ran = await until(
      'secret-tick succeeded',
      async () => (await runs()).runs.find((run) => run.function === 'secret-tick' && run.status === 'succeeded'),
      { timeoutMs: 180_000, intervalMs: 2000, context: () => server.output.slice(-2000) },
    );
    const logs = await svcCli(server, ['app', 'runs', 'sched', '--logs', ran.id]);
    assert.match(logs.stdout, new RegExp(`secret_tick read ${createHash('sha256').update(secret).digest('hex')}`));
  });

  it('purges the periodic jobs when a redeploy removes the schedules', async () => {
    const redeployed = await svcCli(server, ['deploy', path.join(fixture, 'unscheduled.py'), '--json']);
    assert.equal(redeployed.code, 0, redeployed.stderr);
    await until('no periodic job of sched is left', async () => (await periodicJobs()).filter((job) => !job.ParentID).length === 0, 60_000);
    assert.deepEqual((await runs()).schedules, []);
    const c = await cluster();
    await assert.rejects(c.nomadGet(`/v1/var/nomad/jobs/${secretJob}?namespace=${NAMESPACE}`), /404/, 'the Variable went with its job');
  });
});
