import assert from 'node:assert/strict';
import http from 'node:http';
import { usage } from '../../cli/commands/usage.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { capture } from '../cli/fixture.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { testConfig } from '../helpers/config.js';
import { deployLifecycle } from './api-lifecycle-helpers.js';

/**
 * `svc usage` on the embedded platform, with real containers and their cgroups (svc runs as root here):
 * a CPU load run inside a container is counted for its workload within 10% of what its cgroup counted,
 * memory held over time too, by workload, app or day, with its cost at the operator's prices; bad ranges are
 * refused; another workspace sees none.
 */
describe('svc usage (embedded platform)', function () {
  this.timeout(120_000);
  let platform: Platform;
  let call: Call;
  let owner = '';

  before(async function () {
    platform = await startPlatform({
      config: testConfig({ usagePrices: { currency: 'EUR', cpuSecond: 0.01, memoryGiBSecond: 0.002 }, usageRetentionDays: 365 }),
    });
    if (!platform.driver.resourceLimits?.enforced) {
      await platform.close();
      this.skip(); // no cgroups here: nothing counts what containers use
    }
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    await deployLifecycle(platform.url, owner);
  });
  after(() => platform?.close());

  it("counts a CPU load in a container for its workload, within 10% of what the container's cgroup counted", async () => {
    const [hello] = (
      (await call('GET', '/api/v1/containers?app=life', { token: owner })).json.containers as { id: string; deployment: string }[]
    ).filter((c) => c.deployment === 'life/hello');
    await platform.usage.sample();
    const url = (await call('GET', '/api/v1/apps/life', { token: owner })).json.deployments.find(
      (d: { workload: string }) => d.workload === 'hello',
    ).urls.path;
    for (let i = 0; i < 5; i++) assert.equal((await fetch(url)).status, 200);
    const burned = await call('POST', `/api/v1/containers/${hello!.id}/exec`, {
      token: owner,
      json: { command: ['python3', '-c', 'import time\nend = time.process_time() + 1.5\nwhile time.process_time() < end: pass'] },
    });
    assert.equal(burned.json.exitCode, 0, burned.text);
    await platform.usage.sample();
    const counted = (await call('GET', '/api/v1/containers?app=life', { token: owner })).json.containers.find(
      (c: { id: string }) => c.id === hello!.id,
    ).cpuSeconds as number;
    const used = await call('GET', '/api/v1/usage?since=24h', { token: owner });
    assert.equal(used.status, 200, used.text);
    const row = used.json.rows.find((r: { key: string }) => r.key === 'life/hello');
    assert.ok(counted >= 1.5, `the cgroup counted the load: ${counted}`);
    assert.ok(Math.abs(row.cpuSeconds - counted) <= counted * 0.1, `svc usage ${row.cpuSeconds} s against the cgroup's ${counted} s`);
    assert.ok(row.memoryGiBSeconds > 0, 'memory held over the interval');
    assert.equal(used.json.currency, 'EUR');
    assert.equal(row.requests, 5, 'the requests its URL answered');
    assert.ok(row.bytesIn > 5 * 30 && row.bytesOut > 5 * 60, `the bytes they moved: ${row.bytesIn} in, ${row.bytesOut} out`);
    assert.ok(row.memoryReservedGiBSeconds > row.memoryGiBSeconds, 'its memory= reserved, more than it held');
    assert.ok(Math.abs(row.cost - (row.cpuSeconds * 0.01 + row.memoryGiBSeconds * 0.002)) < 1e-6, `the cost ${row.cost} at the prices`);
    const shown = capture({ env: { SVC_SERVER: platform.url, SVC_TOKEN: owner } });
    await usage(shown.context, { by: 'app', since: '24h' });
    assert.match(
      shown.stdout(),
      /^APP +CPU SECONDS +MEMORY GIB-HOURS +RESERVED GIB-HOURS +REQUESTS +CALLS +IN +OUT +COST \(EUR\)\nlife +\d+\.\d +\d+\.\d{3} +\d+\.\d{3} +5 +0 +[\d.]+ (B|KiB) +[\d.]+ (B|KiB) +\d+\.\d{4}\ntotal /,
    );
    const metrics = await (await fetch(`${platform.url}/metrics`, { headers: { Authorization: `Bearer ${owner}` } })).text();
    const series = /^svc_container_cpu_seconds_total\{workspace="default",app="life",workload="hello"\} (\S+)$/m.exec(metrics);
    assert.ok(series, 'the Prometheus counter of the workload');
    assert.ok(Math.abs(Number(series[1]) - row.cpuSeconds) < 1e-6, `the counter ${series[1]} and svc usage ${row.cpuSeconds} agree`);
    const { secret } = await platform.controlPlane.sessions.create(platform.controlPlane.owner.account.id, 'default');
    const page = await (await fetch(`${platform.url}/dashboard/usage`, { headers: { Cookie: `svc_session=${secret}` } })).text();
    assert.match(page, /<a href="\/dashboard\/usage" aria-current="page">Usage<\/a>/);
    const life = (await call('GET', '/api/v1/usage?by=app', { token: owner })).json.rows[0] as { key: string; cpuSeconds: number };
    assert.match(page, new RegExp(`<th scope="row">life</th><td>${life.cpuSeconds.toFixed(1)}</td>`), 'the page sums as the API does');
    assert.match(page, /<th scope="col">Cost \(EUR\)<\/th>/);
    const byDay = await call('GET', '/api/v1/usage?by=day', { token: owner });
    assert.deepEqual(
      byDay.json.rows.map((r: { key: string }) => r.key),
      [new Date().toISOString().slice(0, 10)],
    );
  });

  it('bills a workload request only for its own bytes, not for an API call before it on the same connection', async () => {
    const url = (await call('GET', '/api/v1/apps/life', { token: owner })).json.deployments.find(
      (d: { workload: string }) => d.workload === 'hello',
    ).urls.path as string;
    const bytesIn = async () => {
      await platform.usage.sample();
      const used = await call('GET', '/api/v1/usage?since=24h', { token: owner });
      return used.json.rows.find((r: { key: string }) => r.key === 'life/hello').bytesIn as number;
    };
    const before = await bytesIn();
    // One kept-alive connection: a call of 256 KiB to the raw call route (a run that is not there), then the workload.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const send = (method: string, target: string, body?: Buffer) =>
      new Promise<number>((resolve, reject) => {
        const request = http.request(
          target,
          {
            method,
            agent,
            headers: { Authorization: `Bearer ${owner}`, ...(body ? { 'Content-Type': 'application/vnd.svc.call+pickle' } : {}) },
          },
          (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode ?? 0));
          },
        );
        request.on('error', reject);
        request.end(body);
      });
    assert.equal(await send('POST', `${platform.url}/api/v1/runs/run-0000000000000000/calls`, Buffer.alloc(256 * 1024, 1)), 404);
    assert.equal(await send('GET', url), 200);
    agent.destroy();
    const billed = (await bytesIn()) - before;
    assert.ok(billed > 0 && billed < 16 * 1024, `the workload request was billed ${billed} bytes in`);
  });

  it('refuses a bad range or grouping, and shows another workspace nothing', async () => {
    for (const query of ['since=0h', 'since=366d', 'since=week', 'since=', 'by=hour', 'by=']) {
      assert.equal((await call('GET', `/api/v1/usage?${query}`, { token: owner })).status, 400, query);
    }
    // As far back as the server keeps usage (usageRetentionDays 365 here), and no further.
    assert.equal((await call('GET', '/api/v1/usage?since=200d', { token: owner })).status, 200);
    assert.match(
      (await call('GET', '/api/v1/usage?since=366d', { token: owner })).json.error.message,
      /at most 365d: this server keeps usage 365 days, usageRetentionDays/,
    );
    assert.equal((await call('POST', '/api/v1/workspaces', { token: owner, json: { name: 'acme' } })).status, 201);
    const other = (await call('POST', '/api/v1/workspaces/acme/token', { token: owner, json: {} })).json.secret as string;
    assert.deepEqual((await call('GET', '/api/v1/usage', { token: other })).json.rows, []);
  });
});
