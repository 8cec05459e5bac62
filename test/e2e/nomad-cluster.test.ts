/**
 * svc server on the HashiCorp stack, end to end, against the in-repo Nomad
 * and Consul stand-ins: `scheduler: nomad`, `registry: consul`, `state:
 * consul`. A deploy over the API becomes Nomad jobs whose raw_exec tasks
 * download the bundle through a signed URL and run the real Python runtime;
 * Nomad registers their workers in Consul, where the gateway learns where to
 * send requests; the autoscaler scales through Nomad's scale endpoint; pause
 * stops the jobs and delete purges them. The state (apps, tokens) is in
 * Consul KV, and this one replica holds the leader lock.
 */
import assert from 'node:assert/strict';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import {
  deployClusterApp,
  getJson,
  nomadJson,
  startStandins,
  svcJobs,
  uploadClusterApp,
  uploadProject,
  type Standins,
} from './cluster-helpers.js';
import { until } from '../helpers/until.js';

describe('svc server on Nomad and Consul (stand-ins)', function () {
  this.timeout(180_000);
  let standins: Standins;
  let platform: Platform;
  let call: Call;
  let owner: string;
  let urls: Record<string, string>;
  const reports: unknown[] = [];

  const consulGet = async (p: string) => (await (await fetch(`${standins.consul.url}${p}`)).json()) as any;
  const allocations = async (jobId: string) =>
    (await nomadJson(standins.nomad, `/v1/job/${jobId}/allocations`)).json as { ID: string; ClientStatus: string }[];

  before(async () => {
    standins = await startStandins();
    platform = await startPlatform({ config: standins.config(), report: (error) => reports.push(error), autoscale: { tickMs: 200 } });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
  });
  after(async () => {
    await platform?.close();
    await standins?.close();
  });
  afterEach(() => assert.deepEqual(reports, [], 'no unexpected errors'));

  it('keeps its state in Consul KV and leads the replicas', async () => {
    assert.equal(platform.driver.name, 'nomad');
    assert.equal(platform.registry.name, 'consul');
    await until('this replica leads and has restored the deployments', () => platform.role === 'ready');
    assert.equal(platform.leader?.isLeader(), true);
    assert.equal((await fetch(`${platform.url}/_svc/ready`)).status, 200);
    const keys = (await consulGet('/v1/kv/svc/?keys=true')) as string[];
    assert.ok(
      keys.some((key) => key.startsWith('svc/workspaces/')),
      keys.join('\n'),
    );
    const lock = (await consulGet('/v1/kv/svc/leader')) as { Session?: string }[];
    assert.ok(lock[0]?.Session, 'the leader lock is held by a session');
  });

  it("plans a deploy with Nomad's plan endpoint (--dry-run): the jobs it would create, and nothing registered", async () => {
    const body = await uploadClusterApp(platform);
    const planned = await call('POST', '/api/v1/apps/cluster/deployments/plan', { token: owner, json: body });
    assert.equal(planned.status, 200, planned.text);
    assert.equal(planned.json.scheduler, 'nomad');
    assert.deepEqual(
      planned.json.workloads.map((w: { name: string; change: string }) => [w.name, w.change]),
      [
        ['hello', 'new'],
        ['slow', 'new'],
      ],
    );
    for (const workload of planned.json.workloads) {
      assert.match(workload.job.id, new RegExp(`^svc-default--cluster--${workload.name}--s\\d+$`));
      assert.equal(workload.job.change, 'create');
      assert.deepEqual(workload.job.failures, []);
    }
    assert.deepEqual(await svcJobs(standins.nomad), [], 'a plan registers no job');
    assert.deepEqual((await call('GET', '/api/v1/apps', { token: owner })).json, { apps: [] }, 'and deploys nothing');
  });

  it('deploys: each workload is a Nomad job whose task downloaded the bundle and runs the Python runtime', async () => {
    const deployed = await deployClusterApp(platform);
    urls = deployed.urls;
    // Consul's check passes seconds after Nomad reports the allocation healthy: the deploy switched the routes only once the gateway saw each instance.
    for (const workload of platform.deployments.list().flatMap((d) => d.workloads)) {
      assert.ok(
        workload.unit && platform.registry.instances(workload.unit).length > 0,
        `the gateway sees an instance of ${workload.name} as the deploy returns`,
      );
    }
    // raw_exec was chosen (the stand-in runs no exec tasks): every deploy says what that costs, though no workload sets cpu or memory.
    assert.deepEqual(
      deployed.warnings.filter((line) => /cpu|memory/.test(line)),
      [
        'cpu and memory are not limited: nomadDriver is "raw_exec", which runs tasks without isolation, as the Nomad client\'s user; set nomadDriver to "exec" (the default) or "docker" to have Nomad enforce them',
      ],
    );
    const jobs = await svcJobs(standins.nomad);
    const byWorkload = Object.fromEntries(jobs.map((job) => [job.Meta?.svc_workload, job]));
    assert.deepEqual(Object.keys(byWorkload).sort(), ['hello', 'slow']);
    const job = (await nomadJson(standins.nomad, `/v1/job/${byWorkload.hello!.ID}`)).json;
    assert.match(job.ID, /^svc-default--cluster--hello--s\d+$/);
    assert.equal(job.Meta.svc_unit.split('/')[1], 'cluster');
    const artifact = job.TaskGroups[0].Tasks[0].Artifacts[0];
    assert.match(artifact.GetterSource, new RegExp(`/api/v1/bundles/${deployed.sha256}/artifact\\?expires=\\d+&signature=[0-9a-f]{64}$`));

    const answer = await getJson(urls.hello!);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.hello, 'cluster');
    assert.equal(answer.body.job, job.ID, 'served by a task of the Nomad job');
    assert.ok(
      (await allocations(job.ID)).some((a) => a.ID === answer.body.alloc && a.ClientStatus === 'running'),
      'by one of its running allocations',
    );
    // The gateway learned the worker's address from Consul, where Nomad registered it.
    const health = (await consulGet(`/v1/health/service/${job.ID}?passing=true`)) as { Service: { ID: string } }[];
    assert.deepEqual(
      platform.registry.instances(job.Meta.svc_unit).map((i) => i.id),
      health.map((h) => h.Service.ID),
    );
    assert.ok(health.some((h) => h.Service.ID.startsWith(`_nomad-task-${answer.body.alloc}-`)));
    // The task's output reaches the deployment's logs (read from the allocation by the driver's poller, which runs on its own time).
    // Every read of the logs must answer 200: another status ends the wait at once.
    let logs = '';
    let status = 200;
    await until(
      "the runtime's output is in the logs",
      async () => {
        ({ status, text: logs } = await call('GET', '/api/v1/apps/cluster/deployments/hello/logs', { token: owner }));
        return status === 200 && /svc runtime: hello listening on 127\.0\.0\.1:\d+/.test(logs);
      },
      { abort: () => (status === 200 ? undefined : `the logs answered ${status}`), context: () => `the logs: ${logs}` },
    );
  });

  it("scales up through Nomad's scale endpoint when two requests need two containers, then back down", async () => {
    const jobId = (await svcJobs(standins.nomad)).find((job) => job.Meta?.svc_workload === 'slow')!.ID;
    const both = await Promise.all([getJson(`${urls.slow}?seconds=3`), getJson(`${urls.slow}?seconds=3`)]);
    for (const answer of both) assert.equal(answer.status, 200, JSON.stringify(answer.body));
    // Which allocation serves the queued request depends on which is free first; that a second one started does not.
    assert.ok((await allocations(jobId)).length >= 2, 'Nomad started a second allocation');
    const scale = (await nomadJson(standins.nomad, `/v1/job/${jobId}/scale`)).json;
    const events = Object.values(scale.TaskGroups as Record<string, { Events: { Message: string; Count: number | null }[] }>)[0]!.Events;
    assert.ok(
      events.some((e) => e.Count === 2 && /^svc: scale /.test(e.Message)),
      JSON.stringify(events),
    );
    // keep_warm is 2 s: idle containers stop again (never below min_containers, 0).
    await until(
      'the slow workload scales back to zero',
      async () => (await allocations(jobId)).every((a) => a.ClientStatus !== 'running'),
      60_000,
    );
  });

  it('pause stops the jobs (503 app_paused), resume starts them again', async () => {
    assert.equal((await call('POST', '/api/v1/apps/cluster/pause', { token: owner })).status, 200);
    assert.equal((await getJson(urls.hello!)).body.error.code, 'app_paused');
    const running = async () => {
      const jobs = await svcJobs(standins.nomad);
      return (await Promise.all(jobs.map((job) => allocations(job.ID)))).flat().filter((a) => a.ClientStatus === 'running').length;
    };
    await until('no allocation runs while paused', async () => (await running()) === 0);
    assert.equal((await call('POST', '/api/v1/apps/cluster/resume', { token: owner })).status, 200);
    const answer = await getJson(urls.hello!);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.hello, 'cluster');
  });

  it('delete purges the jobs and their services leave Consul', async () => {
    const before = await svcJobs(standins.nomad);
    assert.equal((await call('DELETE', '/api/v1/apps/cluster', { token: owner })).status, 204);
    assert.deepEqual(await svcJobs(standins.nomad), [], 'every job is purged');
    for (const job of before) assert.equal((await nomadJson(standins.nomad, `/v1/job/${job.ID}`)).status, 404);
    await until('no svc service is left in Consul', async () =>
      Object.keys(await consulGet('/v1/catalog/services')).every((name) => !name.startsWith('svc-')),
    );
    // Without a token a URL nothing serves answers 401 before 404 (it tells strangers nothing).
    assert.equal((await getJson(urls.hello!, owner)).status, 404);
  });

  it("runs a deployed function's spawned call in a run job of its own, found through the Consul service named after that job", async () => {
    const body = await uploadProject(platform, path.join(packageRoot, 'test', 'fixtures', 'cluster-calls'));
    assert.equal((await call('POST', '/api/v1/apps/cluster-calls/deployments', { token: owner, json: body })).status, 201);
    const spawned = await call('POST', '/api/v1/apps/cluster-calls/functions/square/calls', { token: owner, json: { x: 7 } });
    assert.equal(spawned.status, 202, spawned.text);
    const id = spawned.json.call.id as string;
    let view: { status: string; result?: { square: number } } = { status: 'queued' };
    await until('the spawned call ends', async () => {
      view = (await call('GET', `/api/v1/calls/${id}`, { token: owner })).json.call;
      return view.status !== 'queued' && view.status !== 'running';
    });
    assert.equal(view.status, 'succeeded', JSON.stringify(view));
    assert.equal(view.result?.square, 49);
    // The run's job ID carries the run id (the compiled job's would not), and so does the service Consul has.
    const runJob = (await svcJobs(standins.nomad)).find((job) => job.Meta?.svc_unit?.includes('/run-'));
    assert.ok(runJob, 'a job runs the call');
    assert.match(runJob.ID, /^svc-default--cluster-calls--run-[0-9a-f]{16}--square$/);
    const services = (await consulGet('/v1/catalog/services')) as Record<string, string[]>;
    assert.ok(runJob.ID in services, `Consul has the service ${runJob.ID}: ${Object.keys(services).join(', ')}`);
  });
});
