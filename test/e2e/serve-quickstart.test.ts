import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import path from 'node:path';
import type { Deployment } from '../../core/services/deployments/types.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import { quickstartApp, testConfig } from '../helpers/config.js';
import { waitNoneMatching } from '../helpers/processes.js';
import { localDriverOf } from '../helpers/local-driver.js';

/**
 * The walking skeleton end to end: a real platform, the real example app in
 * real Python containers, real HTTP over real sockets.
 */
describe('svc serve examples/quickstart (in process)', function () {
  this.timeout(180_000);
  let platform: Platform;
  let deployment: Deployment;
  const logs: string[] = [];

  const urlOf = (name: string): string => {
    const url = deployment.workloads.find((w) => w.name === name)?.url;
    assert.ok(url, `workload ${name} has a URL`);
    return url;
  };
  const bearer = () => ({ Authorization: `Bearer ${platform.ownerToken.secret}` });

  before(async () => {
    const manifest = await loadManifest({ target: quickstartApp });
    platform = await startPlatform({ config: testConfig(), logs: (line) => logs.push(`${line.unit} ${line.text}`) });
    deployment = await platform.deployments.deploy({
      spec: manifest.spec,
      source: { root: manifest.root, entry: manifest.spec.entry },
      workspace: DEFAULT_WORKSPACE,
      stage: 'preview',
      principal: null,
    });
  });

  after(async () => {
    await platform?.close();
  });

  it('gives every endpoint a stable path-based URL and functions none', () => {
    const byName = Object.fromEntries(deployment.workloads.map((w) => [w.name, w]));
    assert.equal(byName.hello?.url, `${platform.url}/default/quickstart--preview/hello/hello`);
    assert.equal(byName.greet?.url, `${platform.url}/default/quickstart--preview/greet/greet`);
    assert.equal(byName.square?.kind, 'function');
    assert.equal(byName.square?.url, null);
  });

  it('serves the public endpoint without a token, with query arguments converted', async () => {
    const response = await fetch(`${urlOf('hello')}?name=Ada`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    assert.ok(response.headers.get('x-request-id'));
    const body = (await response.json()) as { message: string };
    assert.match(body.message, /Ada/);
  });

  it('answers 401 with a clear body when the protected endpoint gets no token', async () => {
    const response = await fetch(urlOf('greet'), {
      method: 'POST',
      body: JSON.stringify({ name: 'Ada' }),
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('www-authenticate'), 'Bearer');
    const body = (await response.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'unauthorized');
    assert.match(body.error.message, /Authorization: Bearer/);
  });

  it('answers 401 invalid_token for a wrong token', async () => {
    const response = await fetch(urlOf('greet'), {
      method: 'POST',
      body: '{"name":"Ada"}',
      headers: { Authorization: 'Bearer svc_not-a-real-token', 'Content-Type': 'application/json' },
    });
    assert.equal(response.status, 401);
    assert.match(response.headers.get('www-authenticate') ?? '', /invalid_token/);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'unauthorized');
  });

  it('returns the typed result of the protected endpoint with the owner token', async () => {
    const response = await fetch(urlOf('greet'), {
      method: 'POST',
      body: JSON.stringify({ name: 'Ada', excited: true }),
      headers: { ...bearer(), 'Content-Type': 'application/json' },
    });
    assert.equal(response.status, 200);
    const body = (await response.json()) as Record<string, unknown>;
    assert.equal(typeof body.message, 'string');
    assert.match(body.message as string, /Ada/);
    assert.deepEqual(Object.keys(body).sort(), ['length', 'message']);
    assert.equal(body.length, (body.message as string).length);
  });

  it('passes 422 from the runtime when a required argument is missing', async () => {
    const response = await fetch(urlOf('greet'), {
      method: 'POST',
      body: '{}',
      headers: { ...bearer(), 'Content-Type': 'application/json' },
    });
    assert.equal(response.status, 422);
    const body = (await response.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'invalid_arguments');
    assert.match(body.error.message, /name/);
  });

  it('answers 405 with Allow for a method the endpoint does not take', async () => {
    const response = await fetch(urlOf('greet'), { method: 'GET', headers: bearer() });
    assert.equal(response.status, 405);
    assert.equal(response.headers.get('allow'), 'POST');
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'method_not_allowed');
  });

  it('answers 404 for a path that is not the endpoint route', async () => {
    const response = await fetch(`${urlOf('hello')}/elsewhere`);
    assert.equal(response.status, 404);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'not_found');
  });

  it('asks for a token before saying whether an unknown app exists', async () => {
    const anonymous = await fetch(`${platform.url}/default/nope/hello`);
    assert.equal(anonymous.status, 401);
    const withToken = await fetch(`${platform.url}/default/nope/hello`, { headers: bearer() });
    assert.equal(withToken.status, 404);
  });

  it('answers 431 in the JSON error shape for oversized headers', async () => {
    const response = await fetch(urlOf('hello'), { headers: { 'X-Big': 'x'.repeat(20_000) } });
    assert.equal(response.status, 431);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'headers_too_large');
  });

  it('keeps the owner token in the data dir, readable only by the user', () => {
    const mode = statSync(platform.ownerToken.path).mode & 0o777;
    assert.equal(mode, 0o600);
    assert.equal(path.basename(platform.ownerToken.path), 'owner-token');
  });

  it('stops every container process when the platform closes', async () => {
    const marker = localDriverOf(platform).socketDir;
    await platform.close();
    assert.deepEqual(await waitNoneMatching(marker, 5_000), []);
  });
});
