import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import WebSocket from 'ws';
import type { Deployment } from '../../core/services/deployments/types.js';
import { loadManifest } from '../helpers/fixture-manifests.js';
import { packageRoot } from '../../core/model/paths.js';
import { DEFAULT_WORKSPACE, startPlatform, type Platform } from '../../core/platform/platform.js';
import { testConfig } from '../helpers/config.js';

interface Refusal {
  status: number;
  body: { error: { code: string; message: string } };
  headers: IncomingMessage['headers'];
}

/** Opens a WebSocket that the gateway should refuse, and returns its HTTP answer. */
function refusal(url: string, headers: Record<string, string> = {}): Promise<Refusal> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.once('open', () => reject(new Error('the gateway accepted the WebSocket')));
    socket.once('unexpected-response', (_request, response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as Refusal['body'], headers: response.headers }),
      );
    });
    socket.once('error', (error) => reject(error));
  });
}

describe('gateway WebSocket bridge: refusals before the handshake', function () {
  this.timeout(120_000);
  let platform: Platform;
  let deployment: Deployment;
  const ws = (name: string) => deployment.workloads.find((w) => w.name === name)!.url!.replace(/^http/, 'ws');

  before(async () => {
    const manifest = await loadManifest({ target: path.join(packageRoot, 'test', 'fixtures', 'apps', 'echo.py') });
    platform = await startPlatform({ config: testConfig() });
    deployment = await platform.deployments.deploy({
      spec: manifest.spec,
      source: { root: manifest.root, entry: manifest.spec.entry },
      workspace: DEFAULT_WORKSPACE,
      stage: 'deployed',
      principal: null,
    });
  });
  after(async () => platform?.close());

  it('answers 401 in the JSON error shape when a protected workload gets no token', async () => {
    const answer = await refusal(ws('private'));
    assert.equal(answer.status, 401);
    assert.equal(answer.body.error.code, 'unauthorized');
    assert.equal(answer.headers['www-authenticate'], 'Bearer');
    assert.ok(answer.headers['x-request-id']);
  });

  it('asks for a token before saying whether an unknown URL exists', async () => {
    assert.equal((await refusal(`${platform.url.replace(/^http/, 'ws')}/default/nope/x`)).status, 401);
    const withToken = await refusal(`${platform.url.replace(/^http/, 'ws')}/default/nope/x?token=${platform.ownerToken.secret}`);
    assert.equal(withToken.status, 404);
  });

  it('takes the token from ?token= on an upgrade, and refuses an endpoint, which answers HTTP only', async () => {
    const answer = await refusal(`${ws('private')}?token=${platform.ownerToken.secret}`);
    assert.equal(answer.status, 400);
    assert.match(answer.body.error.message, /answers HTTP, not WebSocket/);
  });

  it('refuses a wrong token with invalid_token', async () => {
    const answer = await refusal(ws('private'), { Authorization: 'Bearer svc_wrong' });
    assert.equal(answer.status, 401);
    assert.match(String(answer.headers['www-authenticate']), /invalid_token/);
  });
});
