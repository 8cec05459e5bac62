/**
 * Real Consul and Nomad agents failing while traffic flows (opt-in: `npm run
 * test:cluster`): Consul frozen (SIGSTOP) past the leader's session TTL,
 * Consul killed (SIGKILL) and started again, Nomad stopped and started
 * again. Throughout, the workload answers from the routes svc last knew,
 * marked stale; no request waits without a bound; a deploy fails with an
 * error that names the missing agent instead of hanging; and svc recovers by
 * itself when the agent returns (a deploy works again).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import { until } from '../helpers/until.js';
import { useCluster } from './suite.js';
import { SvcServer, svcCli, type Ran } from './svc-process.js';
import { summary, Traffic, type Answer } from './traffic.js';

const clusterApp = path.join(packageRoot, 'test', 'fixtures', 'cluster', 'app.py');
/** A request that takes longer than this waited without a bound worth the name. */
const REQUEST_BOUND_MS = 30_000;

interface Ready {
  readonly status: string;
  readonly routes: 'current' | 'stale';
  readonly outages: Record<string, { since: string; reason: string }>;
}

describe('svc on real Nomad and Consul: agents failing while traffic flows', function () {
  this.timeout(900_000);
  const cluster = useCluster(this);
  let server: SvcServer;
  let traffic: Traffic;

  const ready = async (): Promise<Ready> =>
    (await (await fetch(`${server.url}/_svc/ready`, { signal: AbortSignal.timeout(5000) })).json()) as Ready;
  const deploy = (): Promise<Ran> => svcCli(server, ['deploy', clusterApp, '--json'], packageRoot, 180_000);
  const figures: string[] = [];

  before(async () => {
    server = await SvcServer.serving((await cluster()).svcEnv());
    const ran = await deploy();
    assert.equal(ran.code, 0, `${ran.stdout}\n${ran.stderr}`);
    const hello = (JSON.parse(ran.stdout) as { workloads: { name: string; url: string }[] }).workloads.find((w) => w.name === 'hello')!.url;
    await until('hello answers', async () => (await fetch(hello)).status === 200, { timeoutMs: 60_000 });
    traffic = new Traffic(hello, { boundMs: REQUEST_BOUND_MS, maxMs: 900_000 });
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(`svc server's last output:\n${server.output.slice(-6000)}`);
  });
  after(async () => {
    await traffic?.stop();
    await server?.stop();
    for (const line of figures) console.log(`      ${line}`);
  });

  /** Every request of `answers` was answered 200 within the bound. */
  const servedThroughout = (answers: readonly Answer[], what: string): void => {
    assert.ok(answers.length > 0, `requests were sent ${what}; the last ones: ${JSON.stringify(traffic.answers.slice(-5))}`);
    assert.ok(
      answers.every((a) => a.status === 200),
      `every request ${what} answered 200: ${summary(answers)}`,
    );
    assert.ok(
      answers.every((a) => a.ms < REQUEST_BOUND_MS),
      `no request ${what} waited past ${REQUEST_BOUND_MS} ms: ${summary(answers)}`,
    );
  };

  /** svc leads and serves with current routes, and a deploy goes through again. */
  const recovered = async (from: number, what: string): Promise<void> => {
    await until(
      `svc leads again with current routes after ${what}`,
      async () => {
        const now = await ready().catch(() => null);
        return now?.status === 'ready' && now.routes === 'current' && Object.keys(now.outages).length === 0;
      },
      { timeoutMs: 180_000, intervalMs: 500, context: () => server.output.slice(-3000) },
    );
    const tookMs = Date.now() - from;
    const ran = await deploy();
    assert.equal(ran.code, 0, `a deploy works again after ${what}:\n${ran.stdout}\n${ran.stderr}\n${server.output.slice(-3000)}`);
    figures.push(`${what}: led again with current routes ${(tookMs / 1000).toFixed(1)} s after the agent returned`);
  };

  it("Consul frozen (SIGSTOP) past the leader's TTL: traffic is served from stale routes, a deploy fails naming Consul, svc recovers when Consul thaws", async () => {
    const c = await cluster();
    const from = Date.now();
    c.consul.process.signal('SIGSTOP');
    let deployMs: number;
    let deployed: Ran;
    try {
      await until('/_svc/ready says the routes are stale', async () => (await ready()).routes === 'stale', {
        timeoutMs: 20_000,
        intervalMs: 250,
      });
      const outage = (await ready()).outages.consul!;
      assert.match(outage.reason, /^Consul at http:\/\/127\.0\.0\.1:\d+ does not answer \(no answer within 2 s\)$/);
      await until(
        'the leader, cut off from Consul, is stranded (it serves what it knew)',
        async () => (await ready()).status === 'stranded',
        { timeoutMs: 60_000, intervalMs: 500, context: () => server.output.slice(-2000) },
      );
      const started = Date.now();
      deployed = await deploy();
      deployMs = Date.now() - started;
    } finally {
      c.consul.process.signal('SIGCONT');
    }
    const thawed = Date.now();
    const during = traffic.since(from).filter((a) => a.at < thawed);
    servedThroughout(during, 'while Consul was frozen');
    assert.ok(
      during.some((a) => a.routes?.startsWith('stale; since=')),
      `answers were marked stale: ${JSON.stringify(during.map((a) => a.routes).slice(-3))}`,
    );
    assert.notEqual(deployed.code, 0, 'the deploy failed');
    assert.match(deployed.stderr, /lost the leadership because Consul at http:\/\/127\.0\.0\.1:\d+ does not answer/);
    assert.ok(deployMs < 120_000, `the deploy failed within a bound (${deployMs} ms)`);
    figures.push(`Consul frozen: ${summary(during)} while frozen; the deploy failed after ${(deployMs / 1000).toFixed(1)} s`);
    await recovered(thawed, 'Consul thawed');
    figures.push(`  after the thaw: ${summary(traffic.since(thawed))}`);
  });

  it('Consul killed (SIGKILL) and started again: the same, once the agent is back on its data', async () => {
    const c = await cluster();
    const from = Date.now();
    await c.consul.process.stop('SIGKILL');
    await until(
      '/_svc/ready names the outage: connections refused',
      async () => /does not answer \(ECONNREFUSED\)$/.test((await ready()).outages.consul?.reason ?? ''),
      { timeoutMs: 20_000, intervalMs: 250 },
    );
    const started = Date.now();
    const deployed = await deploy();
    const deployMs = Date.now() - started;
    assert.notEqual(deployed.code, 0);
    assert.match(deployed.stderr, /Consul at http:\/\/127\.0\.0\.1:\d+/);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 20_000 - (Date.now() - from))));
    const back = Date.now();
    servedThroughout(
      traffic.since(from).filter((a) => a.at < back),
      'while Consul was down',
    );
    c.consul.process.start();
    await until('Consul has a leader again', async () => (await fetch(`${c.consul.url}/v1/status/leader`).catch(() => null))?.ok === true, {
      timeoutMs: 60_000,
    });
    figures.push(
      `Consul killed: ${summary(traffic.since(from).filter((a) => a.at < back))} while down; the deploy failed after ${(deployMs / 1000).toFixed(1)} s`,
    );
    await recovered(back, 'Consul restarted');
    figures.push(`  after the restart: ${summary(traffic.since(back))}`);
  });

  it('Nomad stopped: running containers keep serving, a deploy fails naming Nomad, and works again once Nomad is back', async () => {
    const c = await cluster();
    const from = Date.now();
    await c.nomad.stop('SIGINT');
    await until("/_svc/ready names Nomad's outage", async () => (await ready()).outages.nomad !== undefined, {
      timeoutMs: 20_000,
      intervalMs: 250,
    });
    const now = await ready();
    assert.equal(now.routes, 'current', "the routes are Consul's: still current");
    assert.equal(now.status, 'ready');
    const started = Date.now();
    const deployed = await deploy();
    const deployMs = Date.now() - started;
    assert.notEqual(deployed.code, 0);
    assert.match(deployed.stderr, /scheduler_unreachable|cannot reach Nomad at http:\/\/127\.0\.0\.1:\d+/);
    assert.ok(deployMs < 120_000, `the deploy failed within a bound (${deployMs} ms)`);
    const back = Date.now();
    servedThroughout(
      traffic.since(from).filter((a) => a.at < back),
      'while Nomad was down',
    );
    figures.push(
      `Nomad stopped: ${summary(traffic.since(from).filter((a) => a.at < back))} while down; the deploy failed after ${(deployMs / 1000).toFixed(1)} s`,
    );
    c.nomad.start();
    await until('Nomad answers again', async () => (await fetch(`${c.nomadUrl}/v1/agent/health`).catch(() => null))?.ok === true, {
      timeoutMs: 60_000,
    });
    await recovered(back, 'Nomad restarted');
    servedThroughout(traffic.since(back), 'after Nomad returned');
  });
});
