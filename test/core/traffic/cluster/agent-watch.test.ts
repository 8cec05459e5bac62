/**
 * The agent watch against a real HTTP server that answers, hangs (as a
 * SIGSTOPped agent does: the connection is accepted, nothing comes back) or
 * is gone (connection refused), probed through svc's own Consul client.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentWatch } from '../../../../core/traffic/cluster/agent-watch.js';
import { ConsulClient } from '../../../../core/infra/state/consul-client.js';

describe('agent watch (is Consul answering?)', () => {
  let mode: 'answer' | 'hang' | 'no-leader';
  let server: http.Server;
  let address: string;
  let watch: AgentWatch;
  let consul: ConsulClient;
  let lines: string[];

  beforeEach(async () => {
    mode = 'answer';
    lines = [];
    server = http.createServer((_req, res) => {
      if (mode === 'hang') return; // accepted, never answered
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(mode === 'answer' ? '127.0.0.1:8300' : ''));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    consul = new ConsulClient({ address, maxSockets: 1 });
    watch = new AgentWatch({
      name: 'Consul',
      address,
      meanwhile: 'routes are stale',
      timeoutMs: 1_000, // a bound on a hang, wide enough that a loaded machine still answers within it
      intervalMs: 50,
      async probe(signal) {
        if ((await consul.statusLeader({ signal })) === '') throw new Error('the Consul cluster has no leader');
      },
      log: (text) => lines.push(text),
    });
  });
  afterEach(async () => {
    await watch.close();
    consul.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('has no outage while the agent answers', async () => {
    await watch.check();
    assert.equal(watch.outage(), null);
    assert.deepEqual(lines, []);
  });

  it('sees an agent that accepts but never answers within the probe bound, and since when', async () => {
    await watch.check();
    const answeredBy = Date.now();
    mode = 'hang';
    const started = Date.now();
    await watch.check();
    assert.ok(Date.now() - started < 3000, 'the probe is bounded');
    const outage = watch.outage();
    assert.ok(outage, 'an outage');
    assert.equal(outage.reason, `Consul at ${address} does not answer (no answer within 1 s)`);
    assert.ok(outage.since.getTime() <= answeredBy, 'since the last probe that answered');
    assert.deepEqual(lines, [`${outage.reason} since ${outage.since.toISOString()}: routes are stale`]);
    await watch.check();
    assert.equal(lines.length, 1, 'one line per outage');
    assert.equal(watch.outage()!.since.getTime(), outage.since.getTime());
  });

  it('says why a refused connection and a leaderless cluster are outages', async () => {
    mode = 'no-leader';
    await watch.check();
    assert.match(watch.outage()!.reason, /does not answer \(the Consul cluster has no leader\)$/);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await watch.check();
    await watch.check(); // a kept-alive connection may first be reset; the next one is refused
    assert.match(watch.outage()!.reason, /does not answer \(ECONNREFUSED\)$/);
    server = http.createServer(); // afterEach closes a server
  });

  it('ends the outage when the agent answers again, tells the listeners once, and keeps probing on its timer', async () => {
    let recovered = 0;
    watch.onRecovered(() => recovered++);
    mode = 'hang';
    watch.start();
    const until = Date.now() + 5000;
    while (watch.outage() === null && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(watch.outage(), 'the timer found the outage');
    mode = 'answer';
    while (watch.outage() !== null && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(watch.outage(), null, 'the timer found the agent back');
    assert.equal(recovered, 1);
    assert.match(lines.at(-1)!, new RegExp(`^Consul at ${address} answers again \\(no answer for \\d+ s\\)$`));
  });
});
