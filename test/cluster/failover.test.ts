/**
 * Two `svc server` replicas on real Nomad and Consul (opt-in: `npm run
 * test:cluster`): they elect a leader through a Consul session, the follower
 * serves the workload URLs it copied, and when the leader is killed with
 * SIGKILL (no chance to release its session) the follower takes over once
 * Consul invalidates the session, while the workload keeps answering.
 * Both sit behind one load balancer, their shared `publicUrl`, as the
 * operator guide asks: Nomad downloads bundles from it, so a new leader
 * re-registers each job unchanged and Nomad keeps its allocations running.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import { until } from '../helpers/until.js';
import { NAMESPACE } from './agents.js';
import { useReplicas } from './replicas.js';
import { useCluster } from './suite.js';
import { svcCli } from './svc-process.js';

const clusterApp = path.join(packageRoot, 'test', 'fixtures', 'cluster', 'app.py');

describe('svc on real Nomad and Consul: two replicas and a leader killed', function () {
  this.timeout(600_000);
  const cluster = useCluster(this);
  const replicas = useReplicas(cluster);
  let allocationsBefore: string[];

  before(async () => {});

  it('elects one leader through the Consul lock: the lock key names it, the other follows and serves the routes it copied', async () => {
    const c = await cluster();
    const [lock] = (await c.consulGet('/v1/kv/svc/leader')) as { Session?: string; Value: string }[];
    assert.ok(lock?.Session, 'a session holds svc/leader');
    assert.equal(JSON.parse(Buffer.from(lock.Value, 'base64').toString('utf8')).address, replicas.first.url);

    const ran = await svcCli(replicas.first, ['deploy', clusterApp, '--json']);
    assert.equal(ran.code, 0, `${ran.stdout}\n${ran.stderr}`);
    const hello = (JSON.parse(ran.stdout) as { workloads: { name: string; url: string }[] }).workloads.find((w) => w.name === 'hello')!.url;
    const throughFollower = hello.replace(replicas.balancer.url, replicas.second.url);
    await until('the follower serves the route it copied', async () => (await fetch(throughFollower)).status === 200, {
      timeoutMs: 30_000,
    });
    const api = await fetch(`${replicas.second.url}/api/v1/apps`, { headers: { Authorization: `Bearer ${replicas.first.ownerToken}` } });
    assert.equal(api.status, 200, 'the follower forwards the API to the leader');
    allocationsBefore = await runningAllocations();
    assert.equal(allocationsBefore.length, 1, 'hello runs in Nomad');
  });

  it('takes over when the leader is SIGKILLed, while the workload keeps answering through the survivor', async () => {
    const c = await cluster();
    const hello = `${replicas.second.url}/default/cluster/hello`;
    const started = Date.now();
    await replicas.first.stop('SIGKILL');
    const statuses: number[] = [];
    await until(
      'the survivor leads',
      async () => {
        const answer = await fetch(hello).catch(() => null);
        statuses.push(answer?.status ?? 0);
        const ready = await fetch(`${replicas.second.url}/_svc/ready`);
        return ready.status === 200 && ((await ready.json()) as { status: string }).status === 'ready';
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const tookMs = Date.now() - started;
    assert.ok(
      statuses.every((s) => s === 200),
      `the workload answered throughout the failover: ${statuses.join(',')}`,
    );
    const [lock] = (await c.consulGet('/v1/kv/svc/leader')) as { Value: string }[];
    assert.equal(JSON.parse(Buffer.from(lock!.Value, 'base64').toString('utf8')).address, replicas.second.url);
    const listed = await svcCli(replicas.second, ['app', 'list', '--json']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /cluster/);
    assert.deepEqual(
      await runningAllocations(),
      allocationsBefore,
      'the new leader kept the running allocations (the jobs it registered again did not change)',
    );
    console.log(`      (took over ${(tookMs / 1000).toFixed(1)} s after the SIGKILL)`);
  });

  /**
   * IDs of the running allocations of `hello`, sorted. (`slow` scales to zero when idle, and a
   * take-over starts one container of it again as a restore does: its allocations change anyway.)
   */
  async function runningAllocations(): Promise<string[]> {
    const allocations = (await (await cluster()).nomadGet(`/v1/allocations?namespace=${NAMESPACE}`)) as {
      ID: string;
      JobID: string;
      ClientStatus: string;
    }[];
    return allocations
      .filter((a) => a.ClientStatus === 'running' && a.JobID.startsWith('svc-default--cluster--hello'))
      .map((a) => a.ID)
      .sort();
  }
});
