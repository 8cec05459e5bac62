/**
 * A schedule survives a leader change: two svc replicas share Consul KV (the
 * Consul stand-in) and a data dir, on the embedded scheduler. The leader runs
 * the scheduled function; when it stops, the other replica takes the lead
 * and goes on running it, and no tick runs twice (each is claimed in Consul KV).
 */
import assert from 'node:assert/strict';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient } from '../core/http/api/client.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { until } from '../helpers/until.js';
import { startConsulStandin, type ConsulStandin } from '../standins/consul/index.js';
import { assertTicksOnce, scheduledRuns, scheduleFixture } from './schedule-helpers.js';

describe('scheduled functions across a leader change (Consul stand-in)', function () {
  this.timeout(180_000);
  let consul: ConsulStandin;
  let first: Platform | undefined;
  let second: Platform | undefined;
  const reports: unknown[] = [];

  before(async () => {
    consul = await startConsulStandin({ jitter: false });
  });
  after(async () => {
    await first?.close();
    await second?.close();
    await consul?.close();
  });

  it('the new leader keeps running the schedule after the leader stops, and no tick runs twice', async () => {
    const dataDir = tempDir('svc-shared-data-');
    const config = () => testConfig({ state: 'consul', consulAddr: consul.url, dataDir });
    first = await startPlatform({ config: config(), report: (error) => reports.push(error) });
    await until('the first replica leads', () => first!.role === 'ready');
    second = await startPlatform({ config: config(), report: (error) => reports.push(error) });
    assert.equal(second.leader?.isLeader(), false);

    const owner = first.ownerToken.secret;
    const call = apiClient(first.url);
    const fixture = await scheduleFixture(first.url, owner);
    const deployed = await call('POST', '/api/v1/apps/sched/deployments', { token: owner, json: fixture.body(['tick']) });
    assert.equal(deployed.status, 201, deployed.text);
    const succeeded = async (platform: Platform) =>
      (await scheduledRuns(apiClient(platform.url), owner)).runs.filter((run) => run.status === 'succeeded');
    await until('the leader ran tick twice', async () => (await succeeded(first!)).length >= 2, 60_000);

    await first.close();
    first = undefined;
    await until('the second replica leads', () => second!.role === 'ready', 60_000);
    const before = (await succeeded(second)).length;
    await until('the new leader ran tick twice more', async () => (await succeeded(second!)).length >= before + 2, 60_000);
    const { runs } = await scheduledRuns(apiClient(second.url), owner);
    assertTicksOnce(runs);
    assert.ok(fixture.lines('tick').length >= before + 2);
    assert.deepEqual(reports, []);
  });
});
