/**
 * svc server on real Nomad and Consul agents (opt-in: `npm run test:cluster`):
 * the examples deployed with the CLI and called through the gateway, the
 * exec driver enforcing `memory`, scaling up under load and back to zero,
 * pause, resume, redeploy, delete, and the state in Consul KV across a
 * restart of svc. ACLs are on; svc holds only the policies of
 * config/policies/.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';
import { examplesRoot, packageRoot } from '../../core/model/paths.js';
import { until } from '../helpers/until.js';
import { NAMESPACE } from './agents.js';
import { useCluster } from './suite.js';
import { jobOf, runningAllocations, svcJobs } from './jobs.js';
import { SvcServer, deployTo, svcCli } from './svc-process.js';

const clusterApp = path.join(packageRoot, 'test', 'fixtures', 'cluster', 'app.py');
const limitsApp = path.join(packageRoot, 'test', 'fixtures', 'cluster-limits', 'app.py');
const greedyApp = path.join(packageRoot, 'test', 'fixtures', 'cluster-greedy', 'app.py');

describe('svc on real Nomad and Consul: workloads', function () {
  this.timeout(600_000);
  const cluster = useCluster(this);
  let server: SvcServer;
  const urls: Record<string, string> = {};

  const deploy = (target: string) => deployTo(server, target, urls);
  const jobs = svcJobs;
  const running = runningAllocations;

  before(async () => {
    server = await SvcServer.serving((await cluster()).svcEnv());
  });
  after(async () => {
    await server?.stop();
  });

  it("deploys the quickstart with the CLI: an exec job in svc's namespace, its workers healthy in Consul, answering through the gateway", async () => {
    const c = await cluster();
    await deploy(path.join(examplesRoot, 'quickstart', 'app.py'));
    const answer = await fetch(`${urls['quickstart/hello']}`);
    assert.equal(answer.status, 200);
    assert.deepEqual(await answer.json(), { message: 'Hello, world!' });
    const greet = await fetch(urls['quickstart/greet']!, {
      method: 'POST',
      headers: { Authorization: `Bearer ${server.ownerToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Nomad' }),
    });
    assert.equal(greet.status, 200, await greet.clone().text());

    const job = await c.nomadGet(`/v1/job/${encodeURIComponent((await jobOf(c, 'quickstart', 'hello')).ID)}?namespace=${NAMESPACE}`);
    assert.equal(job.Namespace, NAMESPACE);
    const task = job.TaskGroups[0].Tasks[0];
    assert.equal(task.Driver, 'exec');
    assert.equal(job.Meta.svc_workload, 'hello');
    assert.match(job.UI.Description, /Managed by svc/);
    const health = (await c.consulGet(`/v1/health/service/${job.ID}?passing`)) as { Service: { Port: number; Tags: string[] } }[];
    assert.equal(health.length, 1, 'one worker, its /_svc/health check passing');
    assert.ok(health[0]!.Service.Tags.includes('svc-workload=hello'));
  });

  it('deploys the FastAPI example: its routes and its WebSocket through the gateway', async () => {
    await deploy(path.join(examplesRoot, 'asgi-fastapi', 'app.py'));
    const base = urls['asgi-fastapi/api']!;
    const bearer = { Authorization: `Bearer ${server.ownerToken}` };
    const created = await fetch(`${base}/todos`, {
      method: 'POST',
      headers: { ...bearer, 'Content-Type': 'application/json' },
      body: JSON.stringify({ title: 'run on Nomad' }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    const todo = (await created.json()) as { id: number; title: string };
    assert.equal(todo.title, 'run on Nomad');
    const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/ws`, { headers: bearer });
    const message = new Promise<string>((resolve, reject) =>
      socket.once('message', (data) => resolve(data.toString())).once('error', reject),
    );
    await new Promise<void>((resolve, reject) => socket.once('open', () => resolve()).once('error', reject));
    socket.send('over a WebSocket');
    assert.equal((JSON.parse(await message) as { title: string }).title, 'over a WebSocket');
    socket.close();
  });

  it('deploys the realtime example: a chat answer streamed over the WebSocket', async () => {
    await deploy(path.join(examplesRoot, 'realtime-chat', 'app.py'));
    const url = urls['realtime-chat/chat']!;
    const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${server.ownerToken}` } });
    const events: { type: string }[] = [];
    const done = new Promise<void>((resolve, reject) => {
      socket
        .on('message', (data) => {
          events.push(JSON.parse(data.toString()) as { type: string });
          if (events.at(-1)!.type === 'done') resolve();
        })
        .once('error', reject);
    });
    await new Promise<void>((resolve, reject) => socket.once('open', () => resolve()).once('error', reject));
    socket.send(JSON.stringify({ user: 'Ada', text: 'hello' }));
    await done;
    assert.deepEqual(events[0], { type: 'typing', to: 'Ada' });
    assert.deepEqual(events.at(-1), { type: 'done', words: 6 });
    socket.close();
  });

  it("scales a workload up under load through Nomad's scale endpoint, and back to zero once idle", async () => {
    const c = await cluster();
    await deploy(clusterApp);
    const slow = urls['cluster/slow']!;
    const jobId = (await jobOf(c, 'cluster', 'slow')).ID;
    // A deploy starts one container to check the version is healthy; keep_warm=2 then stops it.
    await until("min_containers=0: the deploy's container stops once idle", async () => (await running(c, jobId)).length === 0, {
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    // Each request holds its slot long enough for a second allocation to start and register even on a
    // busy machine (4 s once fell short, right after a full `npm test`: the queued request then waited for the first).
    const answers = await Promise.all(
      [0, 1].map(() => fetch(`${slow}?seconds=10`).then(async (r) => ({ status: r.status, body: (await r.json()) as { alloc: string } }))),
    );
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200],
    );
    assert.equal(new Set(answers.map((a) => a.body.alloc)).size, 2, 'two requests at once, one slot each: two allocations served them');
    const events = await c.nomadGet(`/v1/job/${encodeURIComponent(jobId)}/scale?namespace=${NAMESPACE}`);
    assert.ok(
      events.TaskGroups.slow.Events.some((e: { Message: string }) => /svc/.test(e.Message)),
      JSON.stringify(events),
    );
    await until(
      'the idle allocations stop (keep_warm=2)',
      async () =>
        (await running(c, jobId)).length === 0 &&
        (await c.nomadGet(`/v1/job/${encodeURIComponent(jobId)}?namespace=${NAMESPACE}`)).TaskGroups[0].Count === 0,
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
  });

  it('pauses, resumes and redeploys, then deletes: the jobs are purged', async () => {
    const c = await cluster();
    const hello = urls['cluster/hello']!;
    assert.equal((await fetch(hello)).status, 200);
    const paused = await svcCli(server, ['app', 'pause', 'cluster']);
    assert.equal(paused.code, 0, paused.stderr);
    assert.equal((await fetch(hello)).status, 503);
    await until(
      'the paused app has no running allocation',
      async () => {
        for (const job of (await jobs(c)).filter((j) => j.Meta?.svc_app === 'cluster'))
          if ((await running(c, job.ID)).length > 0) return false;
        return true;
      },
      { timeoutMs: 60_000 },
    );
    const resumed = await svcCli(server, ['app', 'resume', 'cluster']);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal((await fetch(hello)).status, 200);

    await deploy(clusterApp);
    assert.equal((await fetch(hello)).status, 200);

    const deleted = await svcCli(server, ['app', 'delete', 'cluster', '--yes']);
    assert.equal(deleted.code, 0, deleted.stderr);
    await until("the cluster app's jobs are purged", async () => (await jobs(c)).every((j) => j.Meta?.svc_app !== 'cluster'), {
      timeoutMs: 60_000,
    });
    assert.equal((await fetch(hello, { headers: { Authorization: `Bearer ${server.ownerToken}` } })).status, 404);
  });

  it("enforces memory with the exec driver: the task's cgroup has the limit, and a handler past it is killed by the kernel", async () => {
    const c = await cluster();
    await deploy(limitsApp);
    const url = urls['cluster-limits/hog']!;
    const small = await fetch(`${url}?mib=16`);
    assert.equal(small.status, 200, await small.clone().text());
    const { alloc } = (await small.json()) as { alloc: string };
    // Nomad's cgroup for the task: cgroup v1 under /nomad, v2 under nomad.slice.
    const v1 = `/sys/fs/cgroup/memory/nomad/${alloc}.runtime/memory.limit_in_bytes`;
    const v2 = `/sys/fs/cgroup/nomad.slice/share.slice/${alloc}.runtime.scope/memory.max`;
    const limit = existsSync(v1) ? readFileSync(v1, 'utf8') : readFileSync(v2, 'utf8');
    assert.equal(Number(limit), 128 * 1024 * 1024);
    const job = await c.nomadGet(`/v1/job/${encodeURIComponent((await jobOf(c, 'cluster-limits', 'hog')).ID)}?namespace=${NAMESPACE}`);
    assert.equal(job.TaskGroups[0].Tasks[0].Resources.MemoryMB, 128);
    // cpu is Nomad's share of the node (MHz → cpu.shares on cgroup v1), not a cap: an idle node lets a task use more.
    const shares = `/sys/fs/cgroup/cpu/nomad/${alloc}.runtime/cpu.shares`;
    if (existsSync(shares)) assert.equal(Number(readFileSync(shares, 'utf8')), job.TaskGroups[0].Tasks[0].Resources.CPU);

    const big = await fetch(`${url}?mib=400`);
    assert.ok(big.status >= 500, `a handler past memory="128Mi" fails (${big.status})`);
    await until('a fresh worker serves again', async () => (await fetch(`${url}?mib=16`)).status === 200, {
      timeoutMs: 120_000,
      intervalMs: 1000,
    });
  });

  it('answers a call past its timeout with 504 timeout, and a fresh worker of the exec task serves the next one', async () => {
    await deploy(path.join(packageRoot, 'test', 'fixtures', 'timeouts', 'app.py'));
    const url = urls['timeouts/slow']!;
    const first = (await (await fetch(url)).json()) as { pid: number };
    const late = await fetch(`${url}?seconds=30`);
    assert.equal(late.status, 504);
    assert.equal(((await late.json()) as { error: { code: string } }).error.code, 'timeout');
    let pid = first.pid;
    await until('a fresh worker answers', async () => {
      const answer = await fetch(url);
      if (answer.status === 200) pid = ((await answer.json()) as { pid: number }).pid;
      return pid !== first.pid;
    });
  });

  it("fails a deploy Nomad cannot place at once, saying why (the evaluation's FailedTGAllocs), and leaves no job behind", async () => {
    const c = await cluster();
    const started = Date.now();
    const ran = await svcCli(server, ['deploy', greedyApp, '--json']);
    const tookMs = Date.now() - started;
    assert.notEqual(ran.code, 0, ran.stdout);
    assert.match(
      ran.stderr,
      /Nomad cannot place any allocation of job svc-default--cluster-greedy--greedy\S*: group greedy cannot be placed: 1 node evaluated, \d+ filtered, 1 exhausted; exhausted memory: 1 node/,
    );
    assert.ok(tookMs < 60_000, `it failed in ${tookMs} ms, not after the 120 s health time-out`);
    assert.deepEqual(
      (await jobs(c)).filter((j) => j.Meta?.svc_app === 'cluster-greedy' && j.Status !== 'dead'),
      [],
      'the unit it started was removed',
    );
  });

  it('keeps its state in Consul KV across a restart of svc: the apps and their URLs are back', async () => {
    const c = await cluster();
    const keys = (await c.consulGet('/v1/kv/svc/?keys=true')) as string[];
    assert.ok(
      keys.some((k) => k.startsWith('svc/apps/')),
      keys.join('\n'),
    );
    await server.stop();
    server.start();
    await server.ready();
    const listed = await svcCli(server, ['app', 'list', '--json']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /quickstart/);
    const answer = await fetch(urls['quickstart/hello']!);
    assert.equal(answer.status, 200);
  });
});
