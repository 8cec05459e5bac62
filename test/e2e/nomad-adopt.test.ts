/**
 * Replicas behind one load balancer (their shared `publicUrl`, as the
 * operator guide asks): the new leader restores each workload under the unit
 * its copied routes name, the old leader's, and registers that job again
 * unchanged, so the running allocations stay (nothing restarts on a
 * failover). Where the job would change (the replicas sign bundle URLs with
 * their own addresses), nomad-failover.test.ts shows the new leader starting
 * new jobs beside the old ones instead.
 */
import assert from 'node:assert/strict';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { tempDir } from '../helpers/config.js';
import { freePort } from '../helpers/free-port.js';
import { startLoadBalancer, type LoadBalancer } from '../helpers/load-balancer.js';
import { until } from '../helpers/until.js';
import { deployClusterApp, getJson, nomadJson, startStandins, svcJobs, type Standins } from './cluster-helpers.js';

describe('a take-over behind one public URL keeps the running jobs (stand-ins)', function () {
  this.timeout(180_000);
  let standins: Standins;
  let balancer: LoadBalancer;
  let first: Platform | undefined;
  let second: Platform | undefined;
  const reports: unknown[] = [];

  before(async () => {
    standins = await startStandins();
  });
  after(async () => {
    await first?.close();
    await second?.close();
    await balancer?.close();
    await standins?.close();
  });

  it("restores each workload under the old leader's unit: same jobs, same allocations, one job per workload", async () => {
    const dataDir = tempDir('svc-shared-data-');
    const ports = [await freePort(), await freePort()];
    balancer = await startLoadBalancer(ports);
    const config = (port: number) => standins.config({ dataDir, port, publicUrl: balancer.url });
    first = await startPlatform({ config: config(ports[0]!), report: (error) => reports.push(error) });
    await until('the first replica leads', () => first!.role === 'ready');
    second = await startPlatform({ config: config(ports[1]!), report: (error) => reports.push(error) });
    await until('the second replica follows', () => second!.role === 'following');
    const { urls } = await deployClusterApp(first);
    assert.ok(urls.hello!.startsWith(balancer.url));
    assert.equal((await getJson(urls.hello!)).status, 200);
    const allocations = async (jobId: string) =>
      ((await nomadJson(standins.nomad, `/v1/job/${jobId}/allocations`)).json as { ID: string; ClientStatus: string }[])
        .filter((a) => a.ClientStatus === 'running')
        .map((a) => a.ID)
        .sort();
    const jobs = await svcJobs(standins.nomad);
    const hello = jobs.find((j) => j.Meta?.svc_workload === 'hello')!;
    const running = await allocations(hello.ID);
    assert.equal(running.length, 1);
    await until('the follower has the route', () => second!.registry.instances(hello.Meta!.svc_unit!).length > 0);

    await first.close();
    first = undefined;
    await until('the second replica leads and has restored the app', () => second!.role === 'ready', 60_000);
    assert.equal((await getJson(urls.hello!)).status, 200, 'through the load balancer, now to the survivor');
    assert.deepEqual(
      (await svcJobs(standins.nomad)).map((j) => j.ID).sort(),
      jobs.map((j) => j.ID).sort(),
      'the same jobs, none purged, none added',
    );
    assert.deepEqual(await allocations(hello.ID), running, "hello's allocation kept running");
    // A later deploy takes serials after the adopted ones: a new unit beside, never the same key.
    const redeployed = await deployClusterApp(second);
    assert.equal((await getJson(redeployed.urls.hello!)).status, 200);
    const now = await svcJobs(standins.nomad);
    assert.deepEqual(now.map((j) => j.Meta?.svc_workload).sort(), ['hello', 'slow']);
    assert.ok(
      now.every((j) => !jobs.some((old) => old.ID === j.ID)),
      `new units for the redeploy: ${now.map((j) => j.ID).join(', ')}`,
    );
    assert.deepEqual(reports, []);
  });
});
