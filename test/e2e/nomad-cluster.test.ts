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
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createBundle } from '../../core/bundles/create.js';
import { loadManifest } from '../../core/manifest/load.js';
import { startPlatform, type Platform } from '../../core/platform.js';
import { packageRoot } from '../../core/paths.js';
import { apiClient, type Call } from '../core/api/client.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { startConsulStandin, type ConsulStandin } from '../standins/consul/index.js';
import { startNomadStandin, type NomadStandin } from '../standins/nomad/index.js';
import { upload } from './api-lifecycle-helpers.js';

const APP = path.join(packageRoot, 'test', 'fixtures', 'cluster');

interface Where {
  alloc: string | null;
  job: string | null;
}

describe('svc server on Nomad and Consul (stand-ins)', function () {
  this.timeout(180_000);
  let consul: ConsulStandin;
  let nomad: NomadStandin;
  let platform: Platform;
  let call: Call;
  let owner: string;
  let urls: Record<string, string>;
  const reports: unknown[] = [];

  const nomadGet = async (p: string) => {
    const response = await fetch(`${nomad.url}${p}`);
    return { status: response.status, json: response.headers.get('content-type')?.includes('json') ? await response.json() : await response.text() } as { status: number; json: any };
  };
  const consulGet = async (p: string) => (await (await fetch(`${consul.url}${p}`)).json()) as any;
  const svcJobs = async () => ((await nomadGet('/v1/jobs?prefix=svc-&meta=true')).json as { ID: string; Status: string; Meta: Record<string, string> | null }[]);
  const get = async (url: string): Promise<{ status: number; body: any }> => {
    const response = await fetch(url);
    return { status: response.status, body: await response.json() };
  };

  before(async () => {
    consul = await startConsulStandin({ jitter: false });
    nomad = await startNomadStandin({ dataDir: tempDir('svc-nomad-'), consulUrl: consul.url });
    platform = await startPlatform({
      config: testConfig({ scheduler: 'nomad', registry: 'consul', state: 'consul', nomadAddr: nomad.url, consulAddr: consul.url, queueTimeoutSeconds: 60 }),
      report: (error) => reports.push(error),
      autoscale: { tickMs: 200 },
      ...(process.env.SVC_TEST_TRACE ? { logs: (line: { time: Date; unit: string; stream: string; text: string }) => console.log(line.time.toISOString(), line.unit, line.stream, line.text) } : {}),
    });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
  });
  after(async () => {
    await platform?.close();
    for (const job of (await svcJobs().catch(() => [])) ?? []) await fetch(`${nomad.url}/v1/job/${job.ID}?purge=true`, { method: 'DELETE' });
    await nomad?.close();
    await consul?.close();
  });
  afterEach(() => assert.deepEqual(reports, [], 'no unexpected errors'));

  it('keeps its state in Consul KV and leads the replicas', async () => {
    assert.equal(platform.driver.name, 'nomad');
    assert.equal(platform.registry.name, 'consul');
    const keys = (await consulGet('/v1/kv/svc/?keys=true')) as string[];
    assert.ok(keys.some((key) => key.startsWith('svc/workspaces/')), keys.join('\n'));
    await waitFor(() => platform.leader?.isLeader() === true, 'this replica leads');
    const lock = (await consulGet('/v1/kv/svc/leader')) as { Session?: string }[];
    assert.ok(lock[0]?.Session, 'the leader lock is held by a session');
  });

  it('deploys: each workload is a Nomad job whose task downloaded the bundle and runs the Python runtime', async () => {
    const manifest = await loadManifest({ target: path.join(APP, 'app.py') });
    const bundle = await createBundle(APP, { out: path.join(tempDir('svc-bundle-'), 'bundle.tar.gz') });
    assert.equal((await upload(platform.url, owner, await readFile(bundle.path), bundle.sha256)).status, 201);
    const deployed = await call('POST', '/api/v1/apps/cluster/deployments', { token: owner, json: { manifest: manifest.raw, bundle: bundle.sha256 } });
    assert.equal(deployed.status, 201, deployed.text);
    urls = Object.fromEntries(deployed.json.deployments.map((d: { workload: string; urls: { path: string } }) => [d.workload, d.urls.path]));

    const jobs = await svcJobs();
    if (process.env.SVC_TEST_TRACE) {
      for (const j of jobs) for (const a of (await nomadGet(`/v1/job/${j.ID}/allocations`)).json) console.log(j.ID, a.ID, JSON.stringify(Object.values(a.TaskStates ?? {}).flatMap((t: any) => t.Events.map((e: any) => [new Date(e.Time / 1e6).toISOString(), e.Type, e.DisplayMessage]))));
    }
    const byWorkload = Object.fromEntries(jobs.map((job) => [job.Meta?.svc_workload, job]));
    assert.deepEqual(Object.keys(byWorkload).sort(), ['hello', 'slow']);
    const job = (await nomadGet(`/v1/job/${byWorkload.hello!.ID}`)).json;
    assert.match(job.ID, /^svc-default--cluster--hello--s\d+$/);
    assert.equal(job.Meta.svc_unit.split('/')[1], 'cluster');
    const artifact = job.TaskGroups[0].Tasks[0].Artifacts[0];
    assert.match(artifact.GetterSource, new RegExp(`/api/v1/bundles/${bundle.sha256}/artifact\\?expires=\\d+&signature=[0-9a-f]{64}$`));

    const answer = await get(urls.hello!);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.hello, 'cluster');
    assert.equal(answer.body.job, job.ID, 'served by a task of the Nomad job');
    const allocs = (await nomadGet(`/v1/job/${job.ID}/allocations`)).json as { ID: string; ClientStatus: string }[];
    assert.ok(allocs.some((a) => a.ID === answer.body.alloc && a.ClientStatus === 'running'), 'by one of its running allocations');
    // The gateway learned the worker's address from Consul, where Nomad registered it.
    const health = (await consulGet(`/v1/health/service/${job.ID}?passing=true`)) as { Service: { ID: string } }[];
    assert.deepEqual(platform.registry.instances(job.Meta.svc_unit).map((i) => i.id), health.map((h) => h.Service.ID));
    assert.ok(health.some((h) => h.Service.ID.startsWith(`_nomad-task-${answer.body.alloc}-`)));
  });

  it('scales up through Nomad\'s scale endpoint when two requests need two containers, then back down', async () => {
    const jobId = (await svcJobs()).find((job) => job.Meta?.svc_workload === 'slow')!.ID;
    const both = await Promise.all([get(`${urls.slow}?seconds=3`), get(`${urls.slow}?seconds=3`)]);
    for (const answer of both) assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.notEqual(both[0]!.body.alloc, both[1]!.body.alloc, 'two allocations served the two requests');
    const scale = (await nomadGet(`/v1/job/${jobId}/scale`)).json;
    const events = Object.values(scale.TaskGroups as Record<string, { Events: { Message: string; Count: number | null }[] }>)[0]!.Events;
    assert.ok(events.some((e) => e.Count === 2 && /^svc: scale /.test(e.Message)), JSON.stringify(events));
    // keep_warm is 2 s: idle containers stop again (never below min_containers, 0).
    await waitFor(async () => ((await nomadGet(`/v1/job/${jobId}/allocations`)).json as { ClientStatus: string }[]).every((a) => a.ClientStatus !== 'running'), 'the slow workload scales back to zero', 60_000);
  });

  it('pause stops the jobs (503 app_paused), resume starts them again', async () => {
    assert.equal((await call('POST', '/api/v1/apps/cluster/pause', { token: owner })).status, 200);
    assert.equal((await get(urls.hello!)).body.error.code, 'app_paused');
    const running = async () => {
      const jobs = await svcJobs();
      const allocs = await Promise.all(jobs.map(async (job) => (await nomadGet(`/v1/job/${job.ID}/allocations`)).json as { ClientStatus: string }[]));
      return allocs.flat().filter((a) => a.ClientStatus === 'running').length;
    };
    await waitFor(async () => (await running()) === 0, 'no allocation runs while paused');
    assert.equal((await call('POST', '/api/v1/apps/cluster/resume', { token: owner })).status, 200);
    const answer = await get(urls.hello!);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.hello, 'cluster');
  });

  it('delete purges the jobs and their services leave Consul', async () => {
    const before = await svcJobs();
    assert.equal((await call('DELETE', '/api/v1/apps/cluster', { token: owner })).status, 204);
    assert.deepEqual(await svcJobs(), [], 'every job is purged');
    for (const job of before) assert.equal((await nomadGet(`/v1/job/${job.ID}`)).status, 404);
    await waitFor(async () => Object.keys(await consulGet('/v1/catalog/services')).every((name) => !name.startsWith('svc-')), 'no svc service is left in Consul');
    // Without a token a URL nothing serves answers 401 before 404 (it tells strangers nothing).
    const gone = await fetch(urls.hello!, { headers: { Authorization: `Bearer ${owner}` } });
    assert.equal(gone.status, 404);
  });
});

async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
