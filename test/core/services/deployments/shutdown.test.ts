/**
 * svc stopping with real containers behind real HTTP: the gateway answers
 * 503 shutting_down while requests in flight finish, a deploy or a restore
 * in progress is cut short without leaving a container behind, and a start
 * stopped during its restore releases the data dir.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../../../core/platform/platform.js';
import { loadManifest } from '../../../../core/infra/manifest-loader/load.js';
import { socketBase } from '../../../../core/infra/scheduler/local/socket-dir.js';
import { apiClient } from '../../http/api/client.js';
import { testConfig } from '../../../helpers/config.js';
import { containerPidsMatching, waitNoContainerMatching, waitNoneMatching } from '../../../helpers/processes.js';
import { until } from '../../../helpers/until.js';
import { deployHalt, gate, haltApp, SHUTDOWN_WAIT_MS } from './shutdown-helpers.js';
import { localDriverOf } from '../../../helpers/local-driver.js';

const halt = { workspace: DEFAULT_WORKSPACE, app: 'halt', stage: 'deployed' as const };

/** Containers of the app sleep this long in on_start while it is set: long enough to stop svc meanwhile. */
function slowStarts(): { restore: () => void } {
  const before = process.env.SVC_TEST_START_SLEEP;
  process.env.SVC_TEST_START_SLEEP = '60';
  return {
    restore: () => {
      if (before === undefined) delete process.env.SVC_TEST_START_SLEEP;
      else process.env.SVC_TEST_START_SLEEP = before;
    },
  };
}

async function json(response: Response): Promise<any> {
  return response.json();
}

describe('svc stopping with deployments (real containers)', function () {
  this.timeout(120_000);
  let platform: Platform | undefined;
  const reports: unknown[] = [];
  afterEach(async () => {
    await platform?.close();
    platform = undefined;
    reports.length = 0;
  });

  it('answers 503 shutting_down while svc drains, lets the request in flight finish, and refuses deployment changes', async () => {
    platform = await startPlatform({ config: testConfig(), report: (error) => reports.push(error) });
    const owner = platform.ownerToken.secret;
    const deployed = await deployHalt(platform.url, owner);
    assert.equal(deployed.status, 201, deployed.text);
    const url: string = deployed.json.deployments[0].urls.path;
    const held = gate();
    try {
      const inFlight = fetch(`${url}?gate=${encodeURIComponent(held.path)}`);
      await held.entered();
      const closing = platform.close();

      const during = await fetch(`${url}?gate=${encodeURIComponent(held.path)}`);
      const body = await json(during);
      assert.equal(during.status, 503, JSON.stringify(body));
      assert.equal(body.error.code, 'shutting_down');
      assert.equal(during.headers.get('retry-after'), '5');
      const call = apiClient(platform.url);
      const pause = await call('POST', '/api/v1/apps/halt/pause', { token: owner });
      assert.deepEqual([pause.status, pause.json?.error?.code], [503, 'shutting_down'], pause.text);
      const redeploy = await deployHalt(platform.url, owner);
      assert.deepEqual([redeploy.status, redeploy.json?.error?.code], [503, 'shutting_down'], redeploy.text);

      held.open();
      const answered = await inFlight;
      assert.equal(answered.status, 200);
      assert.deepEqual(await json(answered), { released: true });
      await closing;
      assert.deepEqual(await waitNoneMatching(localDriverOf(platform).socketDir, 5_000), [], 'no container is left');
      assert.deepEqual(reports, []);
    } finally {
      held.open();
    }
  });

  it('cuts a deploy in progress short: shutdown() stops the container it was starting, and refuses later deploys with shutting_down', async () => {
    const manifest = await loadManifest({ target: path.join(haltApp, 'app.py') });
    const request = {
      spec: manifest.spec,
      source: { root: manifest.root, entry: manifest.spec.entry },
      workspace: DEFAULT_WORKSPACE,
      stage: 'deployed' as const,
      principal: null,
    };
    let starting = false;
    platform = await startPlatform({
      config: testConfig(),
      report: (error) => reports.push(error),
      logs: (line) => void (starting ||= line.text.startsWith('starting container')),
    });
    const slow = slowStarts();
    try {
      const deploying = platform.deployments.deploy(request);
      deploying.catch(() => {});
      // Its container runs (its on_start sleeps): the deploy waits for it to become healthy.
      const { socketDir } = localDriverOf(platform);
      await until('the deploy to start its container', () => starting && containerPidsMatching(socketDir).length > 0, SHUTDOWN_WAIT_MS);

      await platform.deployments.shutdown();
      // The image's zygote stays until the platform closes; the container forked from it stops now.
      assert.deepEqual(await waitNoContainerMatching(socketDir, 5_000), [], 'the container the deploy started is stopped');
      await assert.rejects(deploying, { code: 'shutting_down' });
      assert.equal(platform.deployments.get(halt), null, 'the cut deploy recorded nothing');
      await assert.rejects(platform.deployments.deploy(request), { code: 'shutting_down' });
      assert.deepEqual(containerPidsMatching(socketDir), [], 'a refused deploy starts nothing');
      assert.deepEqual(reports, []);
    } finally {
      slow.restore();
    }
  });

  it('stops a start during its restore: rejects with shutting_down, leaves no container, and releases the data dir', async () => {
    const config = testConfig();
    const first = await startPlatform({ config });
    let url: string;
    try {
      const deployed = await deployHalt(first.url, first.ownerToken.secret);
      assert.equal(deployed.status, 201, deployed.text);
      url = deployed.json.deployments[0].urls.path;
    } finally {
      await first.close();
    }

    const stop = new AbortController();
    const slow = slowStarts();
    try {
      const restarting = startPlatform({
        config,
        report: (error) => reports.push(error),
        logs: (line) => {
          if (line.text.startsWith('starting container')) stop.abort();
        },
        signal: stop.signal,
      });
      await assert.rejects(restarting, { code: 'shutting_down' });
      assert.ok(stop.signal.aborted, 'stopped while the restore started a container');
      assert.deepEqual(await waitNoneMatching(`${socketBase()}/${process.pid}-`, 5_000), [], 'no container of this process is left');
      assert.deepEqual(reports, []);
    } finally {
      slow.restore();
    }

    // The store was closed (a start would fail with state_locked otherwise), and the records are as they were.
    platform = await startPlatform({ config });
    const held = gate();
    held.open();
    const restored = await fetch(`${platform.url}${new URL(url).pathname}?gate=${encodeURIComponent(held.path)}`);
    assert.equal(restored.status, 200);
    assert.deepEqual(await json(restored), { released: true });
  });
});
