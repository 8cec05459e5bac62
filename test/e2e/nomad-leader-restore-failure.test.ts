/**
 * A replica that wins the election but cannot take over (a record it cannot
 * read) gives the leadership up at once instead of holding the lock while it
 * serves nothing: it answers as a standby (503 not_leader), releases the lock
 * and tells `svc server` (onLeadershipLost), which exits; without an
 * election the same failure makes startPlatform reject.
 */
import assert from 'node:assert/strict';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { tempDir } from '../helpers/config.js';
import { getJson, startStandins, type Standins } from './cluster-helpers.js';
import { until } from '../helpers/until.js';

describe('a leader whose take-over fails (stand-ins)', function () {
  this.timeout(120_000);
  let standins: Standins;
  let platform: Platform | undefined;

  before(async () => {
    standins = await startStandins();
  });
  after(async () => {
    await platform?.close();
    await standins?.close();
  });

  it('does not keep the leadership while it serves nothing (and does not let the API through)', async () => {
    // An app record svc cannot read.
    const put = await fetch(`${standins.consul.url}/v1/kv/svc/apps/default/broken`, { method: 'PUT', body: 'not json' });
    assert.equal(put.status, 200);
    const reports: unknown[] = [];
    const lost: string[] = [];
    platform = await startPlatform({
      config: standins.config({ dataDir: tempDir('svc-data-') }),
      report: (error) => reports.push(error),
      onLeadershipLost: (reason) => lost.push(reason),
    });
    await until('the restore fails and is reported', () => reports.length > 0);
    assert.match(String((reports[0] as Error).message), /not valid JSON/);

    const ready = await getJson(`${platform.url}/_svc/ready`);
    const apps = await getJson(`${platform.url}/api/v1/whoami`, platform.ownerToken.secret);
    const state = { isLeader: platform.leader?.isLeader(), role: platform.role, ready: ready.status, apiStatus: apps.status, lost };
    // A failed take-over must give the lock up (or end the replica), and a replica that does not serve must not answer the API.
    assert.ok(!(state.isLeader === true && state.role === 'starting' && lost.length === 0), `stuck leader: ${JSON.stringify(state)}`);
    assert.equal(apps.status, 503, `the API answers on a replica that restored nothing: ${JSON.stringify(state)}`);
    await until('svc server is told to exit', () => lost.length === 1);
    assert.match(lost[0]!, /take-over failed: .*not valid JSON/);
    assert.equal(platform.leader?.isLeader(), false, 'the lock is given up for another replica');
  });
});
