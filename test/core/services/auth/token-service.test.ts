import assert from 'node:assert/strict';
import { StoreTokenVerifier } from '../../../../core/services/auth/store-verifier.js';
import { TokenIndex } from '../../../../core/services/auth/token-index.js';
import { TOKEN_MAX_LIFETIME_MS } from '../../../../core/services/auth/token-input.js';
import { Tokens } from '../../../../core/services/auth/token-service.js';
import { hashToken } from '../../../../core/services/auth/tokens.js';
import type { Principal } from '../../../../core/infra/plugin/types.js';
import { Workspaces } from '../../../../core/services/workspaces/workspaces.js';
import { until } from '../../../helpers/until.js';
import { authServices, storeKinds, type AuthServices } from './fixtures.js';

for (const kind of storeKinds()) {
  describe(`Tokens and StoreTokenVerifier (${kind.name})`, () => {
    let services: AuthServices;
    let alice: Principal;
    let mallory: Principal;

    beforeEach(async () => {
      services = await authServices(await kind.open());
      await services.workspaces.create('acme');
      await services.workspaces.create('evil');
      alice = { workspace: 'acme', subject: 'acc_alice' };
      mallory = { workspace: 'evil', subject: 'acc_mallory' };
    });

    afterEach(async () => {
      await services.close();
      await services.store.close();
    });

    it('creates a token that verifies as its workspace and creator', async () => {
      const { secret, token } = await services.tokens.create({ name: 'CI' }, alice);
      assert.match(secret, /^svc_[0-9A-Za-z]{40}$/);
      assert.deepEqual(token, {
        id: token.id,
        name: 'CI',
        workspace: 'acme',
        subject: 'acc_alice',
        createdBy: 'acc_alice',
        createdAt: '2030-01-01T00:00:00.000Z',
        expiresAt: null,
      });
      assert.deepEqual(await services.verifier.verify(secret), { workspace: 'acme', subject: 'acc_alice', tokenId: token.id });
    });

    it('stores the hash and never the secret, and lists neither', async () => {
      const { secret } = await services.tokens.create({}, alice);
      const stored = (await services.store.list('')).map((e) => e.value.toString('utf8')).join('\n');
      assert.ok(!stored.includes(secret), 'the secret is not in the store');
      assert.ok(stored.includes(hashToken(secret)), 'its hash is');
      const listed = JSON.stringify(await services.tokens.list(alice));
      assert.ok(!listed.includes(secret) && !listed.includes(hashToken(secret)) && !listed.includes('"hash"'));
    });

    it("lists the live tokens of the caller's workspace only, oldest first", async () => {
      const first = await services.tokens.create({ name: 'one' }, alice);
      services.clock.advance(1000);
      const second = await services.tokens.create({ name: 'two' }, alice);
      await services.tokens.create({ name: 'theirs' }, mallory);
      const third = await services.tokens.create({ name: 'three' }, alice);
      await services.tokens.revoke(third.token.id, alice);
      assert.deepEqual(
        (await services.tokens.list(alice)).map((t) => t.id),
        [first.token.id, second.token.id],
      );
      assert.deepEqual(
        (await services.tokens.list(mallory)).map((t) => t.name),
        ['theirs'],
      );
    });

    it('refuses a revoked token from the very next verify', async () => {
      const { secret, token } = await services.tokens.create({}, alice);
      assert.notEqual(await services.verifier.verify(secret), null);
      assert.deepEqual(await services.tokens.revoke(token.id, alice), token);
      assert.equal(await services.verifier.verify(secret), null);
      await assert.rejects(services.tokens.revoke(token.id, alice), {
        code: 'not_found',
        message: `workspace "acme" has no token ${token.id}`,
      });
    });

    it('keeps workspaces apart: a token verifies as its own workspace, and others cannot list or revoke it', async () => {
      const ours = await services.tokens.create({}, alice);
      const theirs = await services.tokens.create({}, mallory);
      assert.equal((await services.verifier.verify(ours.secret))?.workspace, 'acme');
      assert.equal((await services.verifier.verify(theirs.secret))?.workspace, 'evil');
      assert.ok(!(await services.tokens.list(mallory)).some((t) => t.id === ours.token.id));
      await assert.rejects(services.tokens.revoke(ours.token.id, mallory), { code: 'not_found' });
      assert.equal((await services.verifier.verify(ours.secret))?.workspace, 'acme', 'still valid after the failed revoke');
    });

    it('stops verifying a token the moment it expires', async () => {
      const expiresAt = new Date(services.clock.now() + 60_000).toISOString();
      const { secret, token } = await services.tokens.create({ expiresAt }, alice);
      assert.equal(token.expiresAt, expiresAt);
      services.clock.advance(59_999);
      assert.notEqual(await services.verifier.verify(secret), null);
      services.clock.advance(1);
      assert.equal(await services.verifier.verify(secret), null);
      assert.equal((await services.tokens.list(alice))[0]?.expiresAt, expiresAt, 'listed until revoked, so people see why it fails');
    });

    it('accepts an expiry up to one year away and no further', async () => {
      const now = services.clock.now();
      await services.tokens.create({ expiresAt: new Date(now + TOKEN_MAX_LIFETIME_MS).toISOString() }, alice);
      await assert.rejects(services.tokens.create({ expiresAt: new Date(now + TOKEN_MAX_LIFETIME_MS + 1000).toISOString() }, alice), {
        code: 'bad_request',
        message: /is more than one year away; the latest allowed now is 2031-01-01T00:00:00.000Z/,
      });
    });

    it('says what is wrong with a bad expiry or name', async () => {
      const cases: [object, RegExp][] = [
        [{ expiresAt: '2029-12-31T23:59:59Z' }, /is not in the future \(now is 2030-01-01T00:00:00.000Z\)/],
        [{ expiresAt: '2030-01-01T00:00:00Z' }, /is not in the future/],
        [{ expiresAt: 'tomorrow' }, /"tomorrow" is not an ISO 8601 date-time with a time zone/],
        [{ expiresAt: '2030-02-01T00:00:00' }, /is not an ISO 8601 date-time with a time zone/],
        [{ expiresAt: 1893456000000 }, /must be an ISO 8601 date-time string, not number/],
        [{ name: '' }, /must not be empty/],
        [{ name: 'x'.repeat(101) }, /101 characters long; at most 100/],
        [{ name: 'a\nb' }, /control characters/],
        [{ name: 7 }, /must be a string, not number/],
      ];
      for (const [input, message] of cases)
        await assert.rejects(services.tokens.create(input, alice), { code: 'bad_request', message }, JSON.stringify(input));
      assert.deepEqual(await services.tokens.list(alice), []);
    });

    it('refuses malformed ids to revoke and tokens for unknown workspaces', async () => {
      await assert.rejects(services.tokens.revoke('../default/x', alice), { code: 'bad_request', message: /is not a token id/ });
      await assert.rejects(services.tokens.create({}, { workspace: 'ghost', subject: 'acc_x' }), { code: 'not_found' });
    });

    it('returns null for unknown and malformed secrets', async () => {
      await services.tokens.create({}, alice);
      for (const junk of ['', 'svc_', 'Bearer x', `svc_${'A'.repeat(40)}`, 42 as never])
        assert.equal(await services.verifier.verify(junk), null);
    });

    it('sees tokens created and revoked by another process through the watch', async () => {
      // A second index and Tokens on the same store stand for a second svc process.
      const otherIndex = await TokenIndex.open(services.store);
      const other = new Tokens(services.store, otherIndex, new Workspaces(services.store), services.clock.now);
      try {
        const { secret, token } = await other.create({}, alice);
        await until('the token created by the other process verifies', async () => (await services.verifier.verify(secret)) !== null);
        await other.revoke(token.id, alice);
        await until(
          'the token revoked by the other process no longer verifies',
          async () => (await services.verifier.verify(secret)) === null,
        );
        assert.equal(await new StoreTokenVerifier(otherIndex).verify(secret), null);
      } finally {
        await otherIndex.close();
      }
    });

    it('never lets a reload bring back a token revoked here, while writes race', async () => {
      const created = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => services.tokens.create({ name: `t${n}` }, alice)));
      // Revocations interleave with the index's own reloads, which the creations above triggered.
      await Promise.all(created.map(({ token }) => services.tokens.revoke(token.id, alice)));
      for (const { secret } of created) assert.equal(await services.verifier.verify(secret), null);
      const fresh = await services.tokens.create({}, alice);
      assert.notEqual(await services.verifier.verify(fresh.secret), null, 'a token made just now verifies at once');
      // A token written behind this index's back shows up only through a reload that ran after all of the above.
      const otherIndex = await TokenIndex.open(services.store);
      try {
        const marker = await new Tokens(services.store, otherIndex, new Workspaces(services.store), services.clock.now).create({}, alice);
        await until(
          "the token written behind the index's back verifies",
          async () => (await services.verifier.verify(marker.secret)) !== null,
        );
      } finally {
        await otherIndex.close();
      }
      for (const { secret } of created) assert.equal(await services.verifier.verify(secret), null);
      assert.notEqual(await services.verifier.verify(fresh.secret), null);
    });
  });
}
