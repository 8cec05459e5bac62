import assert from 'node:assert/strict';
import { startPlatform } from '../../core/platform/platform.js';
import { apiClient } from '../core/http/api/client.js';
import { testConfig } from '../helpers/config.js';

describe('svc server state across restarts (in process)', function () {
  this.timeout(60_000);

  it('keeps tokens, revocations, the plan and the owner token; the sign-in link is only for the first start', async () => {
    const config = testConfig();
    const first = await startPlatform({ config });
    const call = apiClient(first.url);
    const owner = first.ownerToken.secret;
    const ownerAccount = first.controlPlane.owner.account.id;
    let kept: { secret: string; id: string };
    let revoked: { secret: string; id: string };
    try {
      assert.ok(first.signInLink);
      kept = (await call('POST', '/api/v1/tokens', { token: owner, json: { name: 'kept' } })).json;
      revoked = (await call('POST', '/api/v1/tokens', { token: owner, json: { name: 'revoked' } })).json;
      assert.equal((await call('DELETE', `/api/v1/tokens/${revoked.id}`, { token: owner })).status, 204);
      assert.equal((await call('PATCH', '/api/v1/workspace', { token: owner, json: { plan: 'business' } })).status, 200);
    } finally {
      await first.close();
    }

    const second = await startPlatform({ config });
    try {
      const again = apiClient(second.url);
      assert.equal(second.ownerToken.secret, owner, 'the same owner token');
      assert.equal(second.ownerToken.created, false);
      assert.equal(second.controlPlane.owner.account.id, ownerAccount, 'the same owner account');
      assert.equal(second.signInLink, null, 'no new sign-in link after the first start');
      const whoami = await again('GET', '/api/v1/whoami', { token: kept.secret });
      assert.equal(whoami.status, 200);
      assert.equal(whoami.json.tokenId, kept.id);
      assert.equal((await again('GET', '/api/v1/whoami', { token: revoked.secret })).status, 401, 'a revocation survives the restart');
      assert.equal((await again('GET', '/api/v1/whoami', { token: owner })).json.subject, ownerAccount);
      assert.equal((await again('GET', '/api/v1/workspace', { token: owner })).json.plan, 'business');
    } finally {
      await second.close();
    }
  });

  it('warns on start when the owner token was revoked, and keeps it revoked', async () => {
    const config = testConfig();
    const first = await startPlatform({ config });
    try {
      const call = apiClient(first.url);
      const { tokenId } = (await call('GET', '/api/v1/whoami', { token: first.ownerToken.secret })).json;
      assert.equal((await call('DELETE', `/api/v1/tokens/${tokenId}`, { token: first.ownerToken.secret })).status, 204);
    } finally {
      await first.close();
    }
    const second = await startPlatform({ config });
    try {
      assert.match(second.ownerToken.warnings.join('\n'), /owner token in .* was revoked and no longer works; delete the file and restart/);
      assert.equal((await apiClient(second.url)('GET', '/api/v1/whoami', { token: second.ownerToken.secret })).status, 401);
    } finally {
      await second.close();
    }
  });

  it('refuses a second platform on the same data dir with state_locked, and releases the lock on close', async () => {
    const config = testConfig();
    const first = await startPlatform({ config });
    try {
      await assert.rejects(startPlatform({ config }), { code: 'state_locked' });
    } finally {
      await first.close();
    }
    const third = await startPlatform({ config });
    await third.close();
  });

  it('releases the state store when the start fails after opening it', async () => {
    const config = testConfig({ scalingPolicy: 'no-such-policy' });
    await assert.rejects(startPlatform({ config }), { code: 'config_invalid' });
    const ok = await startPlatform({ config: { ...config, scalingPolicy: 'queue-depth' } });
    await ok.close();
  });

  it('lets in-memory platforms (svc serve previews) share a data dir with a server', async () => {
    const config = testConfig();
    const server = await startPlatform({ config });
    const preview = await startPlatform({ config, state: 'memory' });
    try {
      assert.equal((await apiClient(preview.url)('GET', '/api/v1/whoami', { token: preview.ownerToken.secret })).status, 200);
    } finally {
      await preview.close();
      await server.close();
    }
  });
});
