/**
 * Usage on real Nomad and Consul (opt-in: `npm run test:cluster`): a load run through a workload's URL on
 * Nomad's `exec` driver is counted by `svc usage` within 10% of the CPU time the load's process measured for
 * itself, from Nomad's allocation stats; `svc container list` shows the allocation's CPU and memory.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import { until } from '../helpers/until.js';
import { useCluster } from './suite.js';
import { SvcServer, svcCli } from './svc-process.js';

interface UsageRow {
  readonly key: string;
  readonly cpuSeconds: number;
  readonly memoryGiBSeconds: number;
  readonly requests: number;
}

describe('svc on real Nomad and Consul: usage', function () {
  this.timeout(600_000);
  const cluster = useCluster(this);
  let server: SvcServer;

  const cli = async (args: string[]) => {
    const ran = await svcCli(server, args);
    assert.equal(ran.code, 0, `svc ${args.join(' ')}\n${ran.stdout}\n${ran.stderr}\n${server.output.slice(-3000)}`);
    return ran.stdout;
  };
  const burnRow = async () =>
    (JSON.parse(await cli(['usage', '--since', '24h', '--json'])) as { rows: UsageRow[] }).rows.find((r) => r.key === 'meter/burn');

  before(async () => {
    server = await SvcServer.serving((await cluster()).svcEnv());
  });
  after(async () => {
    await server?.stop();
  });

  it("counts a CPU load within 10% of the CPU time its process measured, from Nomad's allocation stats", async () => {
    const deployed = JSON.parse(await cli(['deploy', path.join(packageRoot, 'test', 'fixtures', 'cluster-usage', 'app.py'), '--json'])) as {
      workloads: { name: string; url: string }[];
    };
    const url = deployed.workloads.find((w) => w.name === 'burn')!.url;
    // Read once idle, so that the allocation's start (Python importing the app) is behind the first sample.
    let seen = '';
    await until(
      'the allocation is sampled',
      async () => {
        const row = await burnRow();
        const c = await cluster();
        const allocs = (await c.nomadGet('/v1/allocations?namespace=*')) as { ID: string; ClientStatus: string }[];
        const stats = await Promise.all(
          allocs
            .filter((a) => a.ClientStatus === 'running')
            .map((a) => c.nomadGet(`/v1/client/allocation/${a.ID}/stats?namespace=*`).catch((e: Error) => e.message)),
        );
        seen = `${JSON.stringify(stats)}\n${JSON.stringify(row)}\n${await cli(['container', 'list', 'meter', '--json'])}\n${server.output.slice(-2000)}`;
        return (row?.memoryGiBSeconds ?? 0) > 0;
      },
      { timeoutMs: 90_000, intervalMs: 1_000, context: () => seen },
    );
    const before = (await burnRow())!.cpuSeconds;
    let burned = 0;
    for (let i = 0; i < 12; i++) {
      const answer = await fetch(`${url}?seconds=1`);
      assert.equal(answer.status, 200, await answer.clone().text());
      burned += ((await answer.json()) as { cpuSeconds: number }).cpuSeconds;
    }
    assert.ok(burned >= 12, `the load burned ${burned} s`);
    // The meter adds each container's reading every 15 s; wait until it has added the whole load.
    let counted = 0;
    await until(
      'svc usage counts the load',
      async () => {
        const now = (await burnRow())!.cpuSeconds - before;
        // Settled: a meter interval added no more than an idle worker uses (the load's tail counted).
        const settled = now > 0 && now - counted < burned * 0.02;
        counted = now;
        return settled && now >= burned * 0.9;
      },
      { timeoutMs: 90_000, intervalMs: 16_000, context: () => `counted ${counted} s of ${burned} s` },
    );
    console.log(`    svc usage counted ${counted.toFixed(2)} s of a load that measured ${burned.toFixed(2)} s`);
    assert.ok(Math.abs(counted - burned) <= burned * 0.1, `svc usage counted ${counted} s of a load that measured ${burned} s`);
    const row = (await burnRow())!;
    assert.equal(row.requests, 12, 'the requests its URL answered');

    const listed = JSON.parse(await cli(['container', 'list', 'meter', '--json'])) as {
      containers: { deployment: string; cpuSeconds: number | null; memoryBytes: number | null }[];
    };
    const burn = listed.containers.find((c) => c.deployment === 'meter/burn')!;
    assert.ok((burn.cpuSeconds ?? 0) >= burned * 0.9, `the allocation's CPU seconds: ${burn.cpuSeconds}`);
    assert.ok((burn.memoryBytes ?? 0) > 1 << 20, `the allocation's memory: ${burn.memoryBytes}`);
  });
});
