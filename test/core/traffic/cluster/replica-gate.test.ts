/**
 * The replica gate over real HTTP: what `/_svc/ready` says about the role and
 * the agents svc cannot reach, and what a stranded replica (it led until
 * Consul stopped answering) still serves.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Outage } from '../../../../core/traffic/cluster/agent-watch.js';
import type { LeaderForward } from '../../../../core/traffic/cluster/leader-forward.js';
import { createReplicaGate, type ReplicaRole } from '../../../../core/traffic/cluster/replica-gate.js';
import { RouteTable } from '../../../../core/traffic/gateway/route-table.js';
import { endpoint, routeEntry } from '../gateway/harness.js';

describe('replica gate: roles, /_svc/ready and stale routes', () => {
  let role: ReplicaRole;
  let outages: Record<string, Outage>;
  let forwarded: string[];
  let server: http.Server;
  let base: string;

  before(async () => {
    const routes = new RouteTable();
    routes.add([routeEntry(endpoint(), 'unit-1', '/default/app/hello')]);
    const forward = {
      handle: (req: http.IncomingMessage, res: http.ServerResponse) => {
        forwarded.push(req.url!);
        res.end('forwarded');
      },
    } as unknown as LeaderForward;
    const gate = createReplicaGate({ role: () => role, routes, forward, outages: () => outages });
    server = http.createServer((req, res) => {
      if (!gate.request(req, res)) res.end('gateway');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  beforeEach(() => {
    role = 'ready';
    outages = {};
    forwarded = [];
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  it('says the routes are current and names no outage while the agents answer', async () => {
    const ready = await fetch(`${base}/_svc/ready`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready', routes: 'current', outages: {} });
  });

  it('names each agent it cannot reach, and the routes are stale without Consul', async () => {
    const since = new Date('2026-11-27T15:00:00.000Z');
    outages = { consul: { since, reason: 'Consul at http://127.0.0.1:8500 does not answer (ECONNREFUSED)' } };
    role = 'following';
    const ready = await fetch(`${base}/_svc/ready`);
    assert.equal(ready.status, 200, 'a follower with stale routes still takes traffic');
    assert.deepEqual(await ready.json(), {
      status: 'following',
      routes: 'stale',
      outages: { consul: { since: since.toISOString(), reason: outages.consul!.reason } },
    });
    outages = { nomad: { since, reason: 'Nomad at http://127.0.0.1:4646 does not answer (no answer within 2 s)' } };
    assert.equal(
      ((await (await fetch(`${base}/_svc/ready`)).json()) as { routes: string }).routes,
      'current',
      "without Nomad the routes are still Consul's",
    );
  });

  it('a stranded replica serves the workload URLs it knew, is ready, and refuses the rest naming Consul', async () => {
    role = 'stranded';
    outages = {
      consul: {
        since: new Date('2026-11-27T15:00:00.000Z'),
        reason: 'Consul at http://127.0.0.1:8500 does not answer (no answer within 2 s)',
      },
    };
    assert.equal((await fetch(`${base}/_svc/ready`)).status, 200);
    assert.equal(await (await fetch(`${base}/default/app/hello`)).text(), 'gateway');
    const api = await fetch(`${base}/api/v1/apps`);
    assert.equal(api.status, 503);
    assert.equal(api.headers.get('retry-after'), '5');
    const body = (await api.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'not_leader');
    assert.match(
      body.error.message,
      /lost the leadership because Consul at http:\/\/127\.0\.0\.1:8500 does not answer \(no answer within 2 s\), since 2026-11-27T15:00:00\.000Z/,
    );
    assert.deepEqual(forwarded, [], 'nothing is forwarded: no leader can be known');
  });

  it('a standby is not ready and a follower forwards what is not a workload URL', async () => {
    role = 'standby';
    assert.equal((await fetch(`${base}/_svc/ready`)).status, 503);
    role = 'following';
    assert.equal(await (await fetch(`${base}/api/v1/apps`)).text(), 'forwarded');
    assert.deepEqual(forwarded, ['/api/v1/apps']);
  });

  it('a follower serves a workload URL itself, but hands one with Prefer: respond-async to the leader, which keeps and sends it', async () => {
    role = 'following';
    assert.equal(await (await fetch(`${base}/default/app/hello`)).text(), 'gateway');
    assert.equal(await (await fetch(`${base}/default/app/hello`, { headers: { prefer: 'respond-async, wait=5' } })).text(), 'forwarded');
    assert.deepEqual(forwarded, ['/default/app/hello']);
    role = 'stranded';
    assert.equal(
      await (await fetch(`${base}/default/app/hello`, { headers: { prefer: 'respond-async' } })).text(),
      'gateway',
      'no leader to hand it to',
    );
  });
});
