import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient } from '../core/http/api/client.js';
import { tempDir, testConfig } from '../helpers/config.js';
import { bundleOf, upload } from './api-lifecycle-helpers.js';
import { lifecycleManifests } from './lifecycle-helpers.js';
import { bundleOfFolder } from './run-helpers.js';

/**
 * Durable deployment logs (<data dir>/logs) belong to deployments that
 * exist: a failed first deploy drops its build lines, and a restart drops the
 * files of apps whose records are gone (svc died during their delete), so an
 * app made later under the same name starts with no history.
 */
describe('deployment log files of deployments that do not exist', function () {
  this.timeout(180_000);
  const platforms: Platform[] = [];
  const start = async (dataDir?: string) => {
    const platform = await startPlatform({ config: testConfig(dataDir ? { dataDir } : {}), report: () => {} });
    platforms.push(platform);
    return platform;
  };
  afterEach(async () => {
    for (const platform of platforms.splice(0)) await platform.close();
  });

  it('are dropped: a failed first deploy keeps no build lines, on disk or after a restart', async () => {
    const first = await start();
    const { dataDir } = first.config;
    const owner = first.ownerToken.secret;
    const call = apiClient(first.url);
    // An endpoint (served, so its image is built on deploy) whose package exists on no index.
    const folder = tempDir('svc-review-unbuildable-');
    await writeFile(
      path.join(folder, 'app.py'),
      [
        'import svc',
        'app = svc.App("unbuildable")',
        'image = svc.Image().add_python_packages(["svc-test-no-such-package-7f3a"])',
        '@app.endpoint(route="/", methods=["GET"], image=image)',
        'def noop() -> dict:',
        '    return {}',
        '',
      ].join('\n'),
    );
    const manifest = await loadManifest({ target: path.join(folder, 'app.py') });
    const bundle = await bundleOfFolder(folder);
    assert.equal((await upload(first.url, owner, bundle.bytes, bundle.sha256)).status, 201);
    const deployed = await call('POST', '/api/v1/apps/unbuildable/deployments', {
      token: owner,
      json: { manifest: manifest.raw, bundle: bundle.sha256 },
    });
    assert.equal(deployed.json.error?.code, 'image_build_failed', deployed.text);
    assert.equal((await call('GET', '/api/v1/apps/unbuildable', { token: owner })).status, 404, 'no such app');
    await first.close();

    const file = path.join(dataDir, 'logs', 'default', 'unbuildable', 'noop.jsonl');
    const second = await start(dataDir);
    const key = { workspace: 'default', app: 'unbuildable', stage: 'deployed', workload: 'noop' };
    assert.equal((await apiClient(second.url)('GET', '/api/v1/apps/unbuildable', { token: owner })).status, 404, 'still no such app');
    assert.deepEqual(
      second.deploymentLogs.lines(key).map((l) => l.text),
      [],
      'the restart keeps no lines of an app that does not exist',
    );
    for (let i = 0; i < 40 && existsSync(file); i++) await sleep(50);
    assert.equal(existsSync(file), false, `${file} (lines of an app that does not exist) is removed`);
  });

  it('are dropped on restart: an app deleted while svc died gives no lines to the next app of that name', async () => {
    const dataDir = testConfig().dataDir;
    // What a crash between DeploymentRecords#deleteApp and LogFiles#remove leaves (the delete drains calls for up to 30 s in between).
    await mkdir(path.join(dataDir, 'logs', 'default', 'life'), { recursive: true });
    const ghost = {
      time: new Date(0).toISOString(),
      container: 'c-0000000000',
      stream: 'stdout',
      text: 'a line of the deleted app',
      version: 7,
    };
    await writeFile(path.join(dataDir, 'logs', 'default', 'life', 'hello.jsonl'), `${JSON.stringify(ghost)}\n`);

    const platform = await start(dataDir);
    const owner = platform.ownerToken.secret;
    const call = apiClient(platform.url);
    const [{ v1 }, bundle] = await Promise.all([lifecycleManifests(), bundleOf('v1')]);
    assert.equal((await upload(platform.url, owner, bundle.bytes, bundle.sha256)).status, 201);
    const deployed = await call('POST', '/api/v1/apps/life/deployments', {
      token: owner,
      json: { manifest: v1.raw, bundle: bundle.sha256 },
    });
    assert.equal(deployed.status, 201, deployed.text);
    const logs = await call('GET', '/api/v1/apps/life/deployments/hello/logs', { token: owner });
    assert.equal(logs.status, 200, logs.text);
    const texts = logs.json.lines.map((l: { text: string }) => l.text);
    assert.ok(!texts.includes('a line of the deleted app'), `a new app starts with no history of a deleted one; got:\n${texts.join('\n')}`);
  });
});
