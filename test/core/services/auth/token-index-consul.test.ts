/**
 * A token index goes on following the tokens after the store failed to read
 * them (a Consul KV store answers `state_unavailable` while Consul is
 * unreachable): a replica whose index stopped would accept tokens revoked
 * through another replica, and refuse tokens created there.
 */
import assert from 'node:assert/strict';
import { StoreTokenVerifier } from '../../../../core/services/auth/store-verifier.js';
import { TokenIndex } from '../../../../core/services/auth/token-index.js';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';
import { FlakyStore } from '../../infra/state/flaky-store.js';
import { until } from '../../../helpers/until.js';
import { authServices, type AuthServices } from './fixtures.js';

/** A bound on each wait, under mocha's 30 s, so that a hang fails with what it waited for. */
const WAIT_MS = 25_000;

describe('TokenIndex after a failed read of the store', function () {
  this.timeout(30_000);
  let services: AuthServices;
  let other: TokenIndex | undefined;

  beforeEach(async () => {
    services = await authServices(createMemoryStateStore());
  });
  afterEach(async () => {
    await other?.close();
    await services.close();
    await services.store.close();
  });

  it('goes on following the tokens created and revoked by another replica', async () => {
    const errors: unknown[] = [];
    const flaky = new FlakyStore(services.store);
    other = await TokenIndex.open(flaky, { onError: (error) => errors.push(error) });
    const verifier = new StoreTokenVerifier(other, services.clock.now);
    const owner = { workspace: 'default', subject: services.owner.id };

    flaky.failLists = 2;
    const first = await services.tokens.create({}, owner);
    await until('both failed reads reported', () => errors.length === 2, WAIT_MS);
    await until('the new token verifies', async () => (await verifier.verify(first.secret)) !== null, WAIT_MS);
    await services.tokens.revoke(first.token.id, owner);
    await until('the revoked token no longer verifies', async () => (await verifier.verify(first.secret)) === null, WAIT_MS);
    assert.match(String(errors[0]), /could not reach Consul/);
  });
});
