/**
 * History and undo on real Nomad and Consul (opt-in: `npm run test:cluster`): v1 and v2 of an app
 * deployed with the CLI, then `svc app rollback` to v1: a new Nomad job of v1's code serves, the
 * v2 job is purged, and `svc app history` shows v1 running; `svc deployment scale` registers the job again
 * with new bounds and Nomad runs a second allocation; `svc app rollover` replaces the job again.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import { until } from '../helpers/until.js';
import { NAMESPACE, type Cluster } from './agents.js';
import { useCluster } from './suite.js';
import { runningAllocations, svcJobs } from './jobs.js';
import { SvcServer, svcCli } from './svc-process.js';

const lifecycle = (version: string) => path.join(packageRoot, 'test', 'fixtures', 'lifecycle', version, 'app.py');

describe('svc on real Nomad and Consul: history, rollback, rollover', function () {
  this.timeout(600_000);
  const cluster = useCluster(this);
  let server: SvcServer;
  let url = '';

  const cli = async (args: string[]) => {
    const ran = await svcCli(server, args);
    assert.equal(ran.code, 0, `svc ${args.join(' ')}\n${ran.stdout}\n${ran.stderr}\n${server.output.slice(-3000)}`);
    return ran.stdout;
  };
  const helloJobs = async (c: Cluster) =>
    (await svcJobs(c))
      .filter((j) => j.Meta?.svc_app === 'life' && j.Meta?.svc_workload === 'hello' && j.Status !== 'dead')
      .map((j) => j.ID);
  const version = async () => ((await (await fetch(url)).json()) as { version: number }).version;

  before(async () => {
    server = await SvcServer.serving((await cluster()).svcEnv());
  });
  after(async () => {
    await server?.stop();
  });

  it('rolls back to v1 on Nomad: a job of v1 serves, the v2 job goes, and the history says so', async () => {
    const c = await cluster();
    const first = JSON.parse(await cli(['deploy', lifecycle('v1'), '--json'])) as { workloads: { name: string; url: string }[] };
    url = first.workloads.find((w) => w.name === 'hello')!.url;
    await cli(['deploy', lifecycle('v2'), '--json']);
    assert.equal(await version(), 2);
    const [v2Job] = await helloJobs(c);
    assert.ok(v2Job);

    await cli(['app', 'rollback', 'life', '1']);
    assert.equal(await version(), 1);
    await until('the v2 job is gone', async () => !(await helloJobs(c)).includes(v2Job!), { timeoutMs: 60_000, intervalMs: 500 });
    const history = JSON.parse(await cli(['app', 'history', 'life', '--json'])) as {
      versions: { workload: string; version: number; current: boolean }[];
    };
    assert.deepEqual(
      history.versions.filter((v) => v.workload === 'hello').map((v) => [v.version, v.current]),
      [
        [2, false],
        [1, true],
      ],
    );
  });

  it('scales by hand on Nomad: the job is registered again with the new bounds and a second allocation runs', async () => {
    const c = await cluster();
    const [job] = await helloJobs(c);
    await cli(['deployment', 'scale', 'life/hello', '--min', '2', '--max', '3']);
    const registered = await c.nomadGet(`/v1/job/${encodeURIComponent(job!)}?namespace=${NAMESPACE}`);
    assert.deepEqual([registered.TaskGroups[0].Scaling.Min, registered.TaskGroups[0].Scaling.Max], [2, 3]);
    await until('two allocations run', async () => (await runningAllocations(c, job!)).length === 2, {
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    assert.match(await cli(['deployment', 'list', '--app', 'life']), /2-3 \(by hand\)/);
    // Nomad knew the new bounds before the autoscaler asked for the second allocation.
    assert.doesNotMatch(server.output, /greater than scaling policy maximum/);
  });

  it('rolls over on Nomad: another job of the same version serves', async () => {
    const c = await cluster();
    const [before] = await helloJobs(c);
    await cli(['app', 'rollover', 'life']);
    assert.equal(await version(), 1);
    await until('the old job is gone', async () => !(await helloJobs(c)).includes(before!), { timeoutMs: 60_000, intervalMs: 500 });
    assert.equal((await helloJobs(c)).length, 1);
  });
});
