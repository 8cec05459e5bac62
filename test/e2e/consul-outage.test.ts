/**
 * A leader cut off from Consul (stand-ins: every Consul call fails until the
 * test lets them through again): the gateway keeps serving the workload
 * from the routes and instances it knew, marks its answers stale and says so
 * in /_svc/ready; once no session renewal succeeded for a TTL, the leader is
 * stranded (it serves what it knew, refuses the API naming Consul) and tells
 * `svc server` so, which starts it again once Consul answers. The same
 * against real agents (SIGSTOP, SIGKILL) is test/cluster/faults.test.ts.
 */
import assert from 'node:assert/strict';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { until } from '../helpers/until.js';
import { consulOutage, deployClusterApp, getJson, startStandins, type Standins } from './cluster-helpers.js';

describe('a leader cut off from Consul (stand-ins)', function () {
  this.timeout(180_000);
  let standins: Standins;
  let platform: Platform;
  const lost: { reason: string; cutOff: boolean }[] = [];

  before(async () => {
    standins = await startStandins();
    platform = await startPlatform({
      config: standins.config(),
      report: () => {},
      onLeadershipLost: (reason, cutOff) => lost.push({ reason, cutOff }),
    });
    await until('it leads', () => platform.role === 'ready');
  });
  after(async () => {
    await platform?.close();
    await standins?.close();
  });

  it('serves the workload from stale routes, is stranded after a TTL without Consul, and refuses the API naming Consul', async () => {
    const { urls } = await deployClusterApp(platform);
    assert.equal((await getJson(urls.hello!)).status, 200);
    const outage = consulOutage(standins);
    try {
      await until(
        '/_svc/ready says the routes are stale',
        async () => (await getJson(`${platform.url}/_svc/ready`)).body.routes === 'stale',
      );
      const ready = (await getJson(`${platform.url}/_svc/ready`)).body;
      assert.match(
        ready.outages.consul.reason,
        new RegExp(`^Consul at ${standins.consul.url} does not answer \\(Consul answered GET /v1/status/leader with 500`),
      );
      const answer = await getJson(urls.hello!);
      assert.equal(answer.status, 200, 'served from the instances it knew');
      assert.equal(answer.headers.get('x-svc-routes'), `stale; since=${ready.outages.consul.since}`);

      await until('the leader is stranded (no renewal for its 15 s TTL)', () => platform.role === 'stranded', { timeoutMs: 40_000 });
      assert.deepEqual(
        lost.map((l) => l.cutOff),
        [true],
      );
      assert.match(lost[0]!.reason, /no session renewal succeeded for the TTL/);
      const stranded = await getJson(`${platform.url}/_svc/ready`);
      assert.deepEqual([stranded.status, stranded.body.status, stranded.body.routes], [200, 'stranded', 'stale']);
      assert.equal((await getJson(urls.hello!)).status, 200, 'a stranded replica still serves what it knew');
      const api = await getJson(`${platform.url}/api/v1/apps`, platform.ownerToken.secret);
      assert.equal(api.status, 503);
      assert.equal(api.body.error.code, 'not_leader');
      assert.match(api.body.error.message, /lost the leadership because Consul at .* does not answer/);
    } finally {
      outage.end();
    }
    await until(
      'Consul answers again: the routes are current',
      async () => (await getJson(`${platform.url}/_svc/ready`)).body.routes === 'current',
    );
    const answer = await getJson(urls.hello!);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('x-svc-routes'), null);
    assert.equal(platform.agents.consul?.outage(), null);
  });
});
