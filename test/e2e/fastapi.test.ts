import assert from 'node:assert/strict';
import path from 'node:path';
import WebSocket from 'ws';
import type { Deployment } from '../../core/services/deployments/types.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import { testConfig } from '../helpers/config.js';
import { testTerminal } from '../helpers/test-terminal.js';
import { shell } from '../../cli/commands/shell.js';
import { capture } from '../cli/fixture.js';

/** A real FastAPI app in an image with its own packages, behind the gateway. */
describe('a FastAPI app as an asgi workload', function () {
  this.timeout(300_000);
  let platform: Platform;
  let deployment: Deployment;

  let manifest: Awaited<ReturnType<typeof loadManifest>>;
  const deploy = (on: Platform) =>
    on.deployments.deploy({
      spec: manifest.spec,
      source: { root: manifest.root, entry: manifest.spec.entry },
      workspace: DEFAULT_WORKSPACE,
      stage: 'deployed',
      principal: null,
    });

  before(async function () {
    manifest = await loadManifest({ target: path.join(packageRoot, 'test', 'fixtures', 'fastapi', 'app.py') }).catch((error: Error) => {
      // The CLI imports the app, so FastAPI must be installed where the tests run (.ci/run installs it).
      if (/No module named 'fastapi'/.test(error.message)) this.skip();
      throw error;
    });
    platform = await startPlatform({ config: testConfig() });
    deployment = await deploy(platform);
  });
  after(async () => platform?.close());

  it('validates a pydantic body and builds URLs under the workload prefix', async () => {
    const base = deployment.workloads[0]!.url!;
    const ok = await fetch(`${base}/items`, {
      method: 'POST',
      body: JSON.stringify({ name: 'pen', price: 1.5 }),
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), { item: { name: 'pen', price: 1.5 }, url: `${base}/items` });
    const bad = await fetch(`${base}/items`, {
      method: 'POST',
      body: JSON.stringify({ name: 'pen' }),
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(bad.status, 422, 'FastAPI answers its own validation errors');
  });

  it('opens svc shell in a container of its image, where its packages import', async () => {
    const unit = deployment.workloads[0]!.unit!;
    const container = platform.autoscaler.status(unit)!.containers.find((c) => c.state === 'healthy')!;
    const term = testTerminal(24, 80);
    const env = { SVC_SERVER: platform.url, SVC_TOKEN: platform.ownerToken.secret };
    const code = await shell(
      capture({ env }).context,
      undefined,
      ['python', '-c', 'import fastapi; print("fastapi", fastapi.__version__)'],
      { container: container.id },
      term.terminal,
    );
    assert.equal(code, 0, term.screen());
    assert.match(term.screen(), /^fastapi \d+\.\d+/m);
  });

  it('sees the client and scheme the gateway saw, never what the client claims', async () => {
    const base = deployment.workloads[0]!.url!;
    const claimed = { 'X-Forwarded-For': '198.51.100.2', 'X-Forwarded-Proto': 'https' };
    for (const headers of [{}, claimed]) {
      const answer = await fetch(`${base}/origin`, { headers });
      assert.deepEqual(await answer.json(), { client: '127.0.0.1', scheme: 'http' });
    }
  });

  it('sees the client and scheme the trusted proxy in front saw (trust_proxy)', async () => {
    const behindProxy = await startPlatform({ config: testConfig({ trustProxy: true }) });
    try {
      const base = (await deploy(behindProxy)).workloads[0]!.url!;
      const answer = await fetch(`${base}/origin`, { headers: { 'X-Forwarded-For': '198.51.100.2', 'X-Forwarded-Proto': 'https' } });
      assert.deepEqual(await answer.json(), { client: '198.51.100.2', scheme: 'https' });
    } finally {
      await behindProxy.close();
    }
  });

  it("serves the app's own WebSocket route through the bridge", async () => {
    const socket = new WebSocket(`${deployment.workloads[0]!.url!.replace(/^http/, 'ws')}/ws`);
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const reply = new Promise<string>((resolve) => socket.once('message', (data) => resolve(data.toString())));
    socket.send('svc');
    assert.equal(await reply, 'cvs');
    socket.close();
  });
});
