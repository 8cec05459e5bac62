import assert from 'node:assert/strict';
import { SvcError } from '../../../../core/model/errors.js';
import { getJson, putJson } from '../../../../core/model/store/json.js';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';
import { assertCode } from '../../infra/state/conformance.js';

interface App {
  name: string;
  paused: boolean;
}

function parseApp(value: unknown, key: string): App {
  const app = value as Partial<App> | null;
  if (typeof app?.name !== 'string' || typeof app.paused !== 'boolean') throw new SvcError('state_corrupt', `${key} does not hold an app`);
  return { name: app.name, paused: app.paused };
}

describe('getJson() and putJson()', () => {
  it('round-trips a value through its validator, with the indexes for cas', async () => {
    const store = createMemoryStateStore();
    assert.equal(await getJson(store, 'apps/a', parseApp), null);
    assert.equal(await putJson(store, 'apps/a', { name: 'a', paused: false }, { cas: 0 }), true);
    const read = await getJson(store, 'apps/a', parseApp);
    assert.deepEqual(read?.value, { name: 'a', paused: false });
    assert.equal(await putJson(store, 'apps/a', { ...read!.value, paused: true }, { cas: read!.modifyIndex }), true);
    assert.equal(await putJson(store, 'apps/a', { name: 'a', paused: false }, { cas: read!.modifyIndex }), false);
    assert.equal((await getJson(store, 'apps/a', parseApp))?.value.paused, true);
    await store.close();
  });

  it('reports a stored value that is not JSON, or fails the validator, as state_corrupt', async () => {
    const store = createMemoryStateStore();
    await store.put('apps/broken', '{"name": ');
    await store.put('apps/other', '{"name": 1}');
    const error = await assertCode(getJson(store, 'apps/broken', parseApp), 'state_corrupt');
    assert.match(error.message, /apps\/broken/);
    await assertCode(getJson(store, 'apps/other', parseApp), 'state_corrupt');
    await store.close();
  });
});
