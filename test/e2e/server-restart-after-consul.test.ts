/**
 * `svc server` (the CLI, as a process) cut off from Consul: stranded once no
 * session renewal succeeded for a TTL, it waits for Consul, then starts its
 * platform again in the same process as a follower, wins the lock again and
 * serves as leader, with no supervisor involved. On the stand-ins; the same
 * against real agents is test/cluster/faults.test.ts.
 */
import assert from 'node:assert/strict';
import { TEST_SECRETS_KEY, tempDir } from '../helpers/config.js';
import { freePort } from '../helpers/free-port.js';
import { until } from '../helpers/until.js';
import { SvcServer } from '../cluster/svc-process.js';
import { consulOutage, startStandins, type Standins } from './cluster-helpers.js';

describe('svc server starts again as a follower once Consul answers (stand-ins)', function () {
  this.timeout(180_000);
  let standins: Standins;
  let server: SvcServer;

  before(async () => {
    standins = await startStandins();
    server = new SvcServer(await freePort(), tempDir('svc-data-'), {
      ...process.env,
      SVC_SCHEDULER: 'nomad',
      SVC_STATE: 'consul',
      SVC_SECRETS_KEY: TEST_SECRETS_KEY,
      SVC_NOMAD_DRIVER: 'raw_exec',
      NOMAD_ADDR: standins.nomad.url,
      CONSUL_HTTP_ADDR: standins.consul.url,
    });
    server.start();
    await server.ready('ready');
  });
  after(async () => {
    await server?.stop();
    await standins?.close();
  });

  it('is stranded without Consul, and leads again by itself when Consul answers', async () => {
    const outage = consulOutage(standins);
    try {
      await server.ready('stranded', 60_000);
      assert.match(
        server.output,
        /this replica lost the leadership \(no session renewal succeeded for the TTL \(15s\)\); it serves the workload URLs it knew until Consul answers, then starts again as a follower/,
      );
    } finally {
      outage.end();
    }
    await until(
      'it started again as a follower and leads',
      async () =>
        /started again as a follower on http:\/\/127\.0\.0\.1:\d+/.test(server.output) &&
        ((await (await fetch(`${server.url}/_svc/ready`)).json()) as { status: string }).status === 'ready',
      { timeoutMs: 60_000, intervalMs: 250, context: () => server.output.slice(-2000) },
    );
    assert.match(server.output, /Consul answers again: starting again as a follower/);
    assert.ok(server.running, 'the same process, still running');
    const whoami = await fetch(`${server.url}/api/v1/whoami`, { headers: { Authorization: `Bearer ${server.ownerToken}` } });
    assert.equal(whoami.status, 200, 'the API answers again');
  });
});
