/**
 * Two svc replicas sharing Consul KV, the Nomad cluster and a data dir (the
 * bundles): one leads, the other follows (it serves the leader's routes and
 * forwards the API). When the leader goes (it stops, loses the leadership or
 * crashes), its Nomad jobs keep running and the follower takes over: it
 * serves the copied routes while it restores the deployments from Consul KV,
 * then serves the same URLs, and purges the jobs no deployment of its own
 * runs, so no job is left twice. A demoted leader is a standby (503 `not_leader`).
 */
import assert from 'node:assert/strict';
import type { LogLine } from '../../core/infra/scheduler/types.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { tempDir } from '../helpers/config.js';
import { deployClusterApp, getJson, startStandins, svcJobs, type Standins } from './cluster-helpers.js';
import { until } from '../helpers/until.js';

describe('svc replicas on Nomad and Consul: one leads, the other takes over (stand-ins)', function () {
  this.timeout(180_000);
  let standins: Standins;
  let first: Platform | undefined;
  let second: Platform | undefined;
  const reports: unknown[] = [];
  const secondLogs: LogLine[] = [];
  /** What the second replica's onLeadershipLost heard (`svc server` exits on it). */
  const secondLost: string[] = [];

  before(async () => {
    standins = await startStandins();
  });
  after(async () => {
    await first?.close();
    await second?.close();
    await standins?.close();
  });

  it('one replica leads; the other follows once it has the routes, and forwards the API to the leader', async () => {
    const dataDir = tempDir('svc-shared-data-');
    first = await startPlatform({ config: standins.config({ dataDir }), report: (error) => reports.push(error) });
    await until('the first replica leads', () => first!.role === 'ready');
    second = await startPlatform({
      config: standins.config({ dataDir }),
      report: (error) => reports.push(error),
      logs: (line) => secondLogs.push(line),
      onLeadershipLost: (reason) => secondLost.push(reason),
    });
    assert.equal(second.leader?.isLeader(), false);
    await until("the second replica has the leader's routes", () => second!.role === 'following');

    const ready = await getJson(`${second.url}/_svc/ready`);
    assert.deepEqual([ready.status, ready.body], [200, { status: 'following', routes: 'current', outages: {} }]);
    assert.equal((await fetch(`${second.url}/_svc/health`)).status, 200);
    const forwarded = await getJson(`${second.url}/api/v1/whoami`, second.ownerToken.secret);
    assert.equal(forwarded.status, 200, JSON.stringify(forwarded.body));
    // A request another replica forwarded is never forwarded again: two replicas that disagree on who leads cannot bounce it.
    const bounced = await fetch(`${second.url}/api/v1/whoami`, {
      headers: { Authorization: `Bearer ${second.ownerToken.secret}`, 'X-Svc-Forwarded-By': 'http://elsewhere' },
    });
    assert.equal(bounced.status, 503);
    assert.equal(((await bounced.json()) as { error: { code: string } }).error.code, 'not_leader');
    assert.equal(bounced.headers.get('retry-after'), '1');
    assert.equal((await fetch(`${first.url}/_svc/ready`)).status, 200);
    assert.deepEqual(reports, []);
  });

  it('takes over when the leader lets go: restores the app, serves it, and leaves each workload one job', async () => {
    // Deployed twice, so the leader's jobs carry serials the standby's restore will not give its own.
    await deployClusterApp(first!);
    const { urls } = await deployClusterApp(first!);
    const hello = (await getJson(urls.hello!)).body;
    assert.equal(hello.hello, 'cluster');
    const before = await svcJobs(standins.nomad);
    assert.equal(before.length, 2, before.map((j) => j.ID).join(', '));

    // What a load balancer in front would see of the follower through the take-over: ready, and serving.
    const unit = helloUnit(first!);
    await until('the follower serves hello', () => second!.role === 'following' && second!.registry.instances(unit).length > 0);
    const seen: string[] = [];
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const phase = second!.role;
        const [ready, answer] = await Promise.all([fetch(`${second!.url}/_svc/ready`), fetch(`${second!.url}/default/cluster/hello`)]);
        const [, body] = await Promise.all([ready.text(), answer.text()]);
        seen.push(`${phase}: ready ${ready.status}, hello ${answer.status}${answer.status === 200 ? '' : ` ${body.slice(0, 200)}`}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();

    // The leader stops (a restart, a rolling update of svc): on Nomad it leaves the workloads running.
    await first!.close();
    first = undefined;
    assert.deepEqual(
      (await svcJobs(standins.nomad)).map((j) => j.ID).sort(),
      before.map((j) => j.ID).sort(),
      'the jobs outlive the replica',
    );

    await until('the follower leads and has restored the deployments', () => second!.role === 'ready', 60_000);
    watching = false;
    await watch;
    assert.ok(
      seen.some((line) => line.startsWith('starting:')),
      `the take-over was watched: ${seen.join('; ')}`,
    );
    assert.deepEqual(
      seen.filter((line) => !line.endsWith('ready 200, hello 200')),
      [],
      'ready and serving all along: the workload traffic never stops',
    );
    const moved = urls.hello!.replace(new URL(urls.hello!).origin, second!.url);
    const answer = await getJson(moved);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.hello, 'cluster');

    const after = await svcJobs(standins.nomad);
    assert.deepEqual(
      after.map((j) => j.Meta?.svc_workload).sort(),
      ['hello', 'slow'],
      `one job per workload: ${after.map((j) => j.ID).join(', ')}`,
    );
    assert.ok(
      after.some((job) => job.ID === answer.body.job),
      'the answer comes from a job the new leader runs',
    );
    for (const old of before.filter((job) => !after.some((j) => j.ID === job.ID))) {
      assert.ok(
        secondLogs.some((line) => line.text.startsWith(`purged Nomad job ${old.ID}:`)),
        `says it purged ${old.ID}`,
      );
    }
    assert.deepEqual(reports, []);
  });

  it('a leader whose session Consul invalidates steps down at once, lets go of the workloads and says so; a follower takes over', async () => {
    const third = await startPlatform({
      config: standins.config({ dataDir: second!.config.dataDir }),
      report: (error) => reports.push(error),
    });
    try {
      await until('the third replica follows', () => third.role === 'following');
      // The old leader must not stop its workloads on the way out: watch that through the callback it gets.
      const demoted = second!;
      const lock = (await (await fetch(`${standins.consul.url}/v1/kv/svc/leader`)).json()) as { Session: string }[];
      const destroyed = await fetch(`${standins.consul.url}/v1/session/destroy/${lock[0]!.Session}`, { method: 'PUT' });
      assert.equal(destroyed.status, 200);
      await until('the leader steps down', () => demoted.role === 'standby');
      assert.equal(secondLost.length, 1, 'told once, so that svc server exits');
      const jobs = await svcJobs(standins.nomad);
      assert.equal(jobs.length, 2, 'the demoted leader stopped no job');
      await until('the follower leads and has restored the deployments', () => third.role === 'ready', 60_000);
      assert.equal((await getJson(`${demoted.url}/api/v1/whoami`, demoted.ownerToken.secret)).body.error.code, 'not_leader');
      const hello = (await getJson(`${third.url}/default/cluster/hello`)).body;
      assert.equal(hello.hello, 'cluster');
      assert.deepEqual((await svcJobs(standins.nomad)).map((j) => j.Meta?.svc_workload).sort(), ['hello', 'slow']);
      assert.equal(secondLost.length, 1);
      assert.deepEqual(reports, []);
    } finally {
      await second?.close();
      second = third;
    }
  });
});

function helloUnit(platform: Platform): string {
  const unit = platform.deployments
    .list()
    .flatMap((d) => d.workloads)
    .find((w) => w.name === 'hello')?.unit;
  assert.ok(unit);
  return unit;
}
