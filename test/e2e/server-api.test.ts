import assert from 'node:assert/strict';
import type { Deployment } from '../../core/services/deployments/types.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import { apiClient, type Call } from '../core/http/api/client.js';
import { tokenFor } from '../core/http/api/platform.js';
import { quickstartApp, testConfig } from '../helpers/config.js';

/** The API next to real workloads: the quickstart deployed in real Python containers. */
describe('control-plane API with deployed workloads (in process)', function () {
  this.timeout(180_000);
  let platform: Platform;
  let deployment: Deployment;
  let call: Call;
  const greetUrl = () => deployment.workloads.find((w) => w.name === 'greet')!.url!;
  const greet = (token: string) =>
    fetch(greetUrl(), {
      method: 'POST',
      body: JSON.stringify({ name: 'Ada' }),
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    });

  before(async () => {
    const manifest = await loadManifest({ target: quickstartApp });
    platform = await startPlatform({ config: testConfig() });
    call = apiClient(platform.url);
    deployment = await platform.deployments.deploy({
      spec: manifest.spec,
      source: { root: manifest.root, entry: manifest.spec.entry },
      workspace: DEFAULT_WORKSPACE,
      stage: 'deployed',
      principal: null,
    });
  });
  after(async () => platform?.close());

  it('a token created through the API reaches workloads, and after DELETE the very next request gets 401', async () => {
    const created = await call('POST', '/api/v1/tokens', { token: platform.ownerToken.secret, json: { name: 'workload caller' } });
    assert.equal(created.status, 201);
    assert.equal((await greet(created.json.secret)).status, 200);
    assert.equal((await call('DELETE', `/api/v1/tokens/${created.json.id}`, { token: platform.ownerToken.secret })).status, 204);
    const refused = await greet(created.json.secret);
    assert.equal(refused.status, 401);
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'unauthorized');
  });

  it('GET /deployments lists each workload as <app>/<workload> with stage, kind, URLs and containers', async () => {
    const answer = await call('GET', '/api/v1/deployments', { token: platform.ownerToken.secret });
    assert.equal(answer.status, 200);
    const byName = Object.fromEntries(answer.json.deployments.map((d: { name: string }) => [d.name, d]));
    assert.deepEqual(Object.keys(byName).sort(), ['quickstart/greet', 'quickstart/hello', 'quickstart/square']);
    const greetListing = byName['quickstart/greet'];
    assert.deepEqual(
      {
        stage: greetListing.stage,
        kind: greetListing.kind,
        app: greetListing.app,
        workload: greetListing.workload,
        urls: greetListing.urls,
      },
      { stage: 'deployed', kind: 'endpoint', app: 'quickstart', workload: 'greet', urls: { path: greetUrl(), host: null } },
    );
    assert.equal(greetListing.state, 'ready');
    assert.ok(greetListing.containers.ready >= 1, JSON.stringify(greetListing));
    assert.equal(byName['quickstart/square'].state, 'not_served');
    assert.deepEqual(byName['quickstart/square'].urls, { path: null, host: null });
  });

  it("another workspace's token sees no deployments and gets 404 from the workload", async () => {
    const acme = await tokenFor(platform, 'acme');
    assert.deepEqual((await call('GET', '/api/v1/deployments', { token: acme.secret })).json, { deployments: [] });
    assert.equal((await greet(acme.secret)).status, 404);
  });
});
