import assert from 'node:assert/strict';
import { Sessions, SESSION_IDLE_MS, SESSION_MAX_MS } from '../../../../core/services/accounts/sessions.js';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';
import type { StateStore } from '../../../../core/model/store/types.js';
import { manualClock } from '../auth/fixtures.js';

describe('Sessions (dashboard sessions)', () => {
  let store: StateStore;
  let clock: ReturnType<typeof manualClock>;
  let sessions: Sessions;
  const account = 'acc_00000000000000aa';

  beforeEach(() => {
    store = createMemoryStateStore();
    clock = manualClock();
    sessions = new Sessions(store, { clock: clock.now });
  });

  it("keeps only the hash of the cookie's secret, and finds the session by the secret", async () => {
    const { secret, session } = await sessions.create(account, 'default');
    assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
    const stored = (await store.list('sessions/')).map((entry) => `${entry.key} ${entry.value.toString('utf8')}`).join('\n');
    assert.ok(!stored.includes(secret), 'the secret is never stored');
    assert.deepEqual(await sessions.find(secret), session);
    assert.equal(session.workspace, 'default');
    assert.equal(await sessions.find('x'.repeat(43)), null);
    assert.equal(await sessions.find('not a secret'), null);
    assert.equal(await sessions.find(undefined), null);
  });

  it('ends a session idle for 2 hours, and one that reached 12 hours however busy, deleting it', async () => {
    const idle = await sessions.create(account, 'default');
    clock.advance(SESSION_IDLE_MS - 1);
    assert.notEqual(await sessions.find(idle.secret), null, 'a request just before the idle end');
    clock.advance(SESSION_IDLE_MS - 1);
    assert.notEqual(await sessions.find(idle.secret), null, 'each request starts the idle time again');
    clock.advance(SESSION_IDLE_MS);
    assert.equal(await sessions.find(idle.secret), null);
    assert.equal((await store.list('sessions/')).length, 0, 'deleted once found ended');

    const busy = await sessions.create(account, 'default');
    for (let spent = 0; spent < SESSION_MAX_MS - 60 * 60_000; spent += 60 * 60_000) {
      clock.advance(60 * 60_000);
      assert.notEqual(await sessions.find(busy.secret), null);
    }
    clock.advance(60 * 60_000);
    assert.equal(await sessions.find(busy.secret), null, 'the absolute end, however busy');
  });

  it('signs out on the server: the secret finds nothing afterwards', async () => {
    const { secret } = await sessions.create(account, 'default');
    await sessions.end(secret);
    assert.equal(await sessions.find(secret), null);
    await sessions.end(secret); // twice is fine
  });

  it("claims a form's one-time id once", async () => {
    const { secret } = await sessions.create(account, 'default');
    assert.equal(await sessions.claimForm(secret, 'f1'), true);
    assert.equal(await sessions.claimForm(secret, 'f1'), false);
    assert.equal(await sessions.claimForm(secret, 'f2'), true);
    const [first, second] = await Promise.all([sessions.claimForm(secret, 'f3'), sessions.claimForm(secret, 'f3')]);
    assert.deepEqual([first, second].sort(), [false, true], 'exactly one of two at once');
  });

  it('ends every session of an account, and sweeps ended ones', async () => {
    const a = await sessions.create(account, 'default');
    const b = await sessions.create(account, 'other');
    const other = await sessions.create('acc_00000000000000bb', 'default');
    assert.equal(await sessions.endAllOf(account), 2);
    assert.equal(await sessions.find(a.secret), null);
    assert.equal(await sessions.find(b.secret), null);
    assert.notEqual(await sessions.find(other.secret), null);
    clock.advance(SESSION_MAX_MS);
    assert.equal(await sessions.sweep(), 1);
    assert.equal((await store.list('sessions/')).length, 0);
  });
});
