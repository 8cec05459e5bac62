import assert from 'node:assert/strict';
import path from 'node:path';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { tokenFor } from '../core/http/api/platform.js';
import { testConfig } from '../helpers/config.js';
import { openStream } from './event-stream.js';
import { deployRequest } from './lifecycle-helpers.js';

const LOGS_PATH = '/api/v1/apps/logs/deployments/say/logs';
const key = { workspace: DEFAULT_WORKSPACE, app: 'logs', stage: 'deployed', workload: 'say' };

/** Container output kept per deployment and followed over the API, with a real platform and container. */
describe('API: deployment logs', function () {
  this.timeout(60_000);
  let platform: Platform;
  let call: Call;
  let owner: string;
  let url: string;
  let unit: string;
  const reports: unknown[] = [];

  before(async () => {
    platform = await startPlatform({ config: testConfig(), report: (error) => reports.push(error) });
    call = apiClient(platform.url);
    owner = platform.ownerToken.secret;
    const manifest = await loadManifest({ target: path.join(packageRoot, 'test', 'fixtures', 'logs', 'app.py') });
    const deployment = await platform.deployments.deploy(deployRequest(manifest));
    const say = deployment.workloads.find((w) => w.name === 'say')!;
    url = say.url!;
    unit = say.unit!;
  });
  after(async () => platform?.close());
  afterEach(() => assert.deepEqual(reports, [], 'no unexpected errors'));

  it('follows: a line printed after the stream opened arrives, with container id, time and version; JSON keeps it', async () => {
    const stream = await openStream(`${platform.url}${LOGS_PATH}`, owner);
    try {
      const answered = (await (await fetch(url)).json()) as { said: number };
      const event = await stream.next((e) => e.event === 'log' && JSON.parse(e.data).text === `said ${answered.said}`);
      const line = JSON.parse(event.data);
      assert.equal(line.stream, 'stdout');
      assert.equal(line.version, 1);
      assert.ok(typeof line.container === 'string' && line.container !== '' && line.container !== 'build', line.container);
      assert.ok(
        platform.driver.status(unit).some((c) => c.id === line.container),
        `${line.container} is a container of ${unit}`,
      );
      assert.equal(new Date(line.time).toISOString(), line.time);

      const kept = await call('GET', LOGS_PATH, { token: owner });
      assert.equal(kept.status, 200, kept.text);
      assert.ok(
        kept.json.lines.some(
          (l: { text: string; container: string }) => l.text === `said ${answered.said}` && l.container === line.container,
        ),
      );
    } finally {
      stream.close();
    }
  });

  it('removes the subscriber when the client disconnects', async () => {
    const stream = await openStream(`${platform.url}${LOGS_PATH}`, owner);
    assert.equal(platform.deploymentLogs.subscriberCount(key), 1);
    stream.close();
    while (platform.deploymentLogs.subscriberCount(key) > 0) await new Promise((resolve) => setTimeout(resolve, 10));
  });

  it('answers 404 for another workspace, an unknown app or workload; 422 for a bad name; 400 for a query', async () => {
    const acme = await tokenFor(platform, 'acme-logs');
    const theirs = await call('GET', LOGS_PATH, { token: acme.secret });
    assert.equal(theirs.status, 404);
    assert.equal(theirs.json.error.code, 'not_found');
    assert.equal((await call('GET', '/api/v1/apps/nope/deployments/say/logs', { token: owner })).status, 404);
    assert.equal((await call('GET', '/api/v1/apps/logs/deployments/nope/logs', { token: owner })).status, 404);
    assert.equal((await call('GET', '/api/v1/apps/logs/deployments/Bad_Name/logs', { token: owner })).status, 422);
    assert.equal((await call('GET', `${LOGS_PATH}?follow=1`, { token: owner })).status, 400);
    assert.equal((await call('GET', LOGS_PATH)).status, 401);
  });

  it('ends the stream with event: end when the deployment is deleted', async () => {
    const stream = await openStream(`${platform.url}${LOGS_PATH}`, owner);
    try {
      const deleted = await call('DELETE', '/api/v1/apps/logs/deployments/say', { token: owner });
      assert.equal(deleted.status, 204, deleted.text);
      const end = await stream.next((e) => e.event === 'end');
      assert.deepEqual(JSON.parse(end.data), { reason: 'deleted' });
      assert.equal(platform.deploymentLogs.subscriberCount(key), 0);
    } finally {
      stream.close();
    }
  });
});
