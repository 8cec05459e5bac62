import assert from 'node:assert/strict';
import { Accounts } from '../../../../core/services/accounts/accounts.js';
import { SignInLinks, SIGN_IN_LIFETIME_MS } from '../../../../core/services/accounts/sign-in.js';
import { openFileStateStore } from '../../../../core/infra/state/file-store.js';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';
import type { StateStore } from '../../../../core/model/store/types.js';
import { tempDirs } from '../../infra/state/temp-dirs.js';
import { manualClock, storeKinds } from './fixtures.js';

async function allValues(store: StateStore): Promise<string> {
  return (await store.list('')).map((entry) => `${entry.key}=${entry.value.toString('utf8')}`).join('\n');
}

describe('Accounts#ensureOwner()', () => {
  const dirs = tempDirs();

  it('creates the owner account on the first start and finds the same one after a restart', async () => {
    const dataDir = dirs();
    let store = await openFileStateStore({ dataDir });
    const first = await new Accounts(store).ensureOwner();
    assert.equal(first.created, true);
    assert.match(first.account.id, /^acc_[0-9a-f]{16}$/);
    assert.equal(first.account.role, 'owner');
    assert.deepEqual(first.account.workspaces, ['default']);
    await store.close();
    store = await openFileStateStore({ dataDir });
    const again = await new Accounts(store).ensureOwner();
    assert.deepEqual(again, { account: first.account, created: false });
    assert.equal((await store.keys('accounts/')).length, 1);
    await store.close();
  });

  it('makes one owner when two starts race', async () => {
    const store = createMemoryStateStore();
    const results = await Promise.all([1, 2, 3].map(() => new Accounts(store).ensureOwner()));
    assert.equal(new Set(results.map((r) => r.account.id)).size, 1);
    assert.equal(results.filter((r) => r.created).length, 1);
  });
});

for (const kind of storeKinds()) {
  describe(`SignInLinks (${kind.name})`, () => {
    async function setUp() {
      const store = await kind.open();
      const clock = manualClock();
      const accounts = new Accounts(store, clock.now);
      const { account } = await accounts.ensureOwner();
      return { store, clock, account, links: new SignInLinks(store, accounts, { clock: clock.now }) };
    }

    it('signs the account in once, and never again with the same link', async () => {
      const { store, account, links } = await setUp();
      const { secret, expiresAt } = await links.issue(account.id);
      assert.equal(expiresAt, '2030-01-01T00:15:00.000Z');
      assert.deepEqual(await links.consume(secret), account);
      await assert.rejects(links.consume(secret), {
        code: 'unauthorized',
        message: 'this sign-in link is invalid, expired or already used',
      });
      await store.close();
    });

    it('stores only a hash of the secret', async () => {
      const { store, account, links } = await setUp();
      const { secret } = await links.issue(account.id);
      assert.ok(!(await allValues(store)).includes(secret));
      await store.close();
    });

    it('refuses a link from the moment it expires', async () => {
      const { store, clock, account, links } = await setUp();
      const { secret } = await links.issue(account.id);
      clock.advance(SIGN_IN_LIFETIME_MS);
      await assert.rejects(links.consume(secret), { code: 'unauthorized' });
      assert.deepEqual(await store.keys('sign-in/'), [], 'an expired link is deleted when tried');
      await store.close();
    });

    it('lets exactly one of several concurrent uses win', async () => {
      const { store, account, links } = await setUp();
      const { secret } = await links.issue(account.id);
      const results = await Promise.allSettled([1, 2, 3, 4].map(() => links.consume(secret)));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      await store.close();
    });

    it('refuses unknown and malformed secrets the same way', async () => {
      const { store, links } = await setUp();
      for (const junk of ['', 'nope', 'A'.repeat(43), 42 as never]) await assert.rejects(links.consume(junk), { code: 'unauthorized' });
      await store.close();
    });

    it('issues links only for accounts that exist', async () => {
      const { store, links } = await setUp();
      await assert.rejects(links.issue('acc_0000000000000000'), { code: 'not_found' });
      await store.close();
    });

    it('sweeps expired links and keeps live ones', async () => {
      const { store, clock, account, links } = await setUp();
      await links.issue(account.id);
      clock.advance(SIGN_IN_LIFETIME_MS - 1);
      const live = await links.issue(account.id);
      clock.advance(1);
      assert.equal(await links.sweep(), 1);
      assert.equal((await store.keys('sign-in/')).length, 1);
      assert.equal((await links.consume(live.secret)).id, account.id);
      await store.close();
    });
  });
}
