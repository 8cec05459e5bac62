/**
 * `timeout=` on Nomad (the in-repo stand-ins running the real Python runtime
 * in raw_exec tasks, workers on TCP ports): the same enforcement as on the
 * embedded platform, since it lives in the container's runtime. A call past
 * its time-out gets 504 `timeout`, and a fresh worker (a new pid, on the same
 * port) serves the next one.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { packageRoot } from '../../core/model/paths.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient } from '../core/http/api/client.js';
import { until } from '../helpers/until.js';
import { startStandins, uploadProject, type Standins } from './cluster-helpers.js';

describe('time-outs on Nomad and Consul (stand-ins)', function () {
  this.timeout(180_000);
  let standins: Standins;
  let platform: Platform;
  const reports: unknown[] = [];

  before(async () => {
    standins = await startStandins();
    platform = await startPlatform({ config: standins.config(), report: (error) => reports.push(error) });
  });
  after(async () => {
    await platform?.close();
    await standins?.close();
  });

  it('answers a call past its timeout with 504 timeout and replaces the worker in its allocation', async () => {
    const body = await uploadProject(platform, path.join(packageRoot, 'test', 'fixtures', 'timeouts'));
    const deployed = await apiClient(platform.url)('POST', '/api/v1/apps/timeouts/deployments', {
      token: platform.ownerToken.secret,
      json: body,
    });
    assert.equal(deployed.status, 201, deployed.text);
    const url = deployed.json.deployments.find((d: { workload: string }) => d.workload === 'slow').urls.path as string;

    const first = (await (await fetch(url)).json()) as { pid: number };
    const late = await fetch(`${url}?seconds=30`);
    assert.equal(late.status, 504);
    const { error } = (await late.json()) as { error: { code: string; message: string } };
    assert.equal(error.code, 'timeout');
    assert.match(error.message, /^slow did not finish within its timeout of 1 s/);

    // Nomad has no per-worker events: the fresh worker listens on the same port once it started.
    let pid = first.pid;
    await until('a fresh worker answers', async () => {
      const answer = await fetch(url);
      if (answer.status === 200) pid = ((await answer.json()) as { pid: number }).pid;
      return pid !== first.pid;
    });
    assert.deepEqual(reports, []);
  });
});
