import assert from 'node:assert/strict';
import { TokenUsage } from '../../../../core/services/auth/token-usage.js';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';

describe('TokenUsage (when tokens were last used)', () => {
  it('notes uses in memory, writes them on flush for every later process, and keeps the newest', async () => {
    const store = createMemoryStateStore();
    const here = new TokenUsage(store);
    const t0 = Date.parse('2030-01-01T00:00:00Z');
    const first = { workspace: 'default', tokenId: 'tok_000000000001' };
    here.touch(first, t0);
    here.touch(first, t0 + 5_000);
    // The same token by another principal object (the index reloaded), with an older time: the newest wins.
    here.touch({ ...first }, t0 + 1_000);
    here.touch({ workspace: 'other', tokenId: 'tok_000000000002' }, t0);
    assert.equal((await here.lastUsed('default')).get('tok_000000000001'), '2030-01-01T00:00:05.000Z', 'noted: shown before any flush');
    assert.deepEqual([...(await new TokenUsage(store).lastUsed('default'))], [], 'nothing written yet');
    await here.flush();
    const later = new TokenUsage(store);
    assert.deepEqual(
      [...(await later.lastUsed('default'))],
      [['tok_000000000001', '2030-01-01T00:00:05.000Z']],
      'another process (or a restart) reads it; workspaces stay apart',
    );
    later.touch(first, t0 + 60_000);
    assert.equal((await later.lastUsed('default')).get('tok_000000000001'), '2030-01-01T00:01:00.000Z');
    await here.flush();
    assert.equal((await store.list('token-usage/')).length, 2, 'a flush with nothing new writes nothing more');
    later.touch(first, t0 + 90_000);
    await later.forget('default', 'tok_000000000001');
    assert.deepEqual([...(await later.lastUsed('default'))], [], 'forgotten, a use noted just before included');
    await later.flush();
    assert.deepEqual([...(await new TokenUsage(store).lastUsed('default'))], [], 'and never written back by a later flush');
  });
});
