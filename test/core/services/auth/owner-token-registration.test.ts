import assert from 'node:assert/strict';
import { ensureOwnerToken } from '../../../../core/services/auth/owner-token.js';
import { openFileStateStore } from '../../../../core/infra/state/file-store.js';
import { tempDirs } from '../../infra/state/temp-dirs.js';
import { authServices } from './fixtures.js';

describe('Tokens#registerOwnerToken()', () => {
  const dirs = tempDirs();

  /** One start of svc on `dataDir`: open the store, set up, register the owner token, verify it. */
  async function start(dataDir: string) {
    const services = await authServices(await openFileStateStore({ dataDir }));
    const { secret } = await ensureOwnerToken(dataDir);
    const registered = await services.tokens.registerOwnerToken(secret, services.owner);
    const principal = await services.verifier.verify(secret);
    return {
      services,
      secret,
      registered,
      principal,
      stop: async () => {
        await services.close();
        await services.store.close();
      },
    };
  }

  it('registers the owner token once, as a token of default acting as the owner account, across restarts', async () => {
    const dataDir = dirs();
    const first = await start(dataDir);
    assert.equal(first.registered.status, 'created');
    assert.deepEqual(first.principal, { workspace: 'default', subject: first.services.owner.id, tokenId: first.registered.token.id });
    await first.stop();

    const second = await start(dataDir);
    assert.equal(second.secret, first.secret);
    assert.equal(second.registered.status, 'existing');
    assert.deepEqual(second.registered.token, first.registered.token);
    assert.deepEqual(second.principal, first.principal);
    assert.equal((await second.services.store.keys('tokens/')).length, 1, 'one record, not one per start');
    assert.equal((await second.services.tokens.list(second.principal!)).length, 1);
    await second.stop();
  });

  it('keeps a revoked owner token revoked after a restart', async () => {
    const dataDir = dirs();
    const first = await start(dataDir);
    await first.services.tokens.revoke(first.registered.token.id, first.principal!);
    await first.stop();

    const second = await start(dataDir);
    assert.equal(second.registered.status, 'revoked');
    assert.equal(second.principal, null);
    await second.stop();
  });

  it('refuses a secret that is not an svc token', async () => {
    const first = await start(dirs());
    await assert.rejects(first.services.tokens.registerOwnerToken('hunter2', first.services.owner), { code: 'config_invalid' });
    await first.stop();
  });
});
