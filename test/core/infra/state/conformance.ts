/**
 * The StateStore conformance suite: Consul KV semantics that every store
 * (file, memory, Consul KV) must show. `makeStore` returns a fresh, empty
 * store; the suite closes it after each test.
 */
import assert from 'node:assert/strict';
import { SvcError, type ErrorCode } from '../../../../core/model/errors.js';
import { MAX_KEY_BYTES, MAX_VALUE_BYTES, type StateStore } from '../../../../core/model/store/types.js';

export function describeStateStoreConformance(name: string, makeStore: () => Promise<StateStore>): void {
  describe(`StateStore conformance: ${name}`, () => {
    let store: StateStore;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    describe('get() and put()', () => {
      it('returns null for a key never written', async () => {
        assert.equal(await store.get('apps/none'), null);
      });

      it('stores strings as UTF-8 and bytes as they are, and returns them as Buffers', async () => {
        const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
        assert.equal(await store.put('text', 'héllo ☃'), true);
        assert.equal(await store.put('bytes', bytes), true);
        assert.equal(await store.put('empty', ''), true);
        assert.deepEqual((await store.get('text'))?.value, Buffer.from('héllo ☃', 'utf8'));
        assert.deepEqual((await store.get('bytes'))?.value, bytes);
        assert.deepEqual((await store.get('empty'))?.value, Buffer.alloc(0));
      });

      it('sets createIndex = modifyIndex on create, keeps createIndex and raises modifyIndex on update', async () => {
        await store.put('k', 'one');
        const created = await entry('k');
        assert.equal(created.createIndex, created.modifyIndex);
        await store.put('k', 'two');
        const updated = await entry('k');
        assert.equal(updated.createIndex, created.createIndex);
        assert.ok(updated.modifyIndex > created.modifyIndex);
        assert.equal(updated.value.toString(), 'two');
      });

      it('hands out copies: changing a returned or given buffer changes nothing stored', async () => {
        const given = Buffer.from('abc');
        await store.put('k', given);
        given[0] = 0x7a;
        const first = await entry('k');
        first.value[1] = 0x7a;
        assert.equal((await entry('k')).value.toString(), 'abc');
      });
    });

    describe('put() with cas', () => {
      it('cas 0 creates only when the key is absent', async () => {
        assert.equal(await store.put('k', 'first', { cas: 0 }), true);
        const before = await entry('k');
        assert.equal(await store.put('k', 'second', { cas: 0 }), false);
        assert.deepEqual(await entry('k'), before);
      });

      it('cas N writes only while the modifyIndex is N', async () => {
        await store.put('k', 'one');
        const one = await entry('k');
        assert.equal(await store.put('k', 'two', { cas: one.modifyIndex }), true);
        const two = await entry('k');
        assert.equal(await store.put('k', 'stale', { cas: one.modifyIndex }), false);
        assert.deepEqual(await entry('k'), two);
        assert.equal(await store.put('absent', 'x', { cas: two.modifyIndex }), false);
        assert.equal(await store.get('absent'), null);
      });

      it('lets exactly one of N concurrent writers win from the same modifyIndex, every round', async () => {
        await store.put('counter', '0');
        for (let round = 1; round <= 5; round++) {
          const seen = await entry('counter');
          const results = await Promise.all(
            Array.from({ length: 10 }, (_, writer) => store.put('counter', `${round}:${writer}`, { cas: seen.modifyIndex })),
          );
          assert.equal(results.filter(Boolean).length, 1, `round ${round}: ${results.join(',')}`);
          const winner = results.indexOf(true);
          assert.equal((await entry('counter')).value.toString(), `${round}:${winner}`);
        }
      });

      it('loses no increment when N writers retry a read-modify-write loop concurrently', async () => {
        const writers = 20;
        await store.put('counter', '0');
        const increment = async (): Promise<number> => {
          for (let attempts = 1; ; attempts++) {
            const seen = await entry('counter');
            const next = String(Number(seen.value.toString()) + 1);
            if (await store.put('counter', next, { cas: seen.modifyIndex })) return attempts;
          }
        };
        const attempts = await Promise.all(Array.from({ length: writers }, increment));
        assert.equal((await entry('counter')).value.toString(), String(writers));
        assert.ok(
          attempts.some((n) => n > 1),
          'the writers did race',
        );
      });

      it('refuses a cas that is not a non-negative integer', async () => {
        await assertCode(store.put('k', 'v', { cas: -1 }), 'state_key_invalid');
        await assertCode(store.put('k', 'v', { cas: 1.5 }), 'state_key_invalid');
      });
    });

    describe('delete() and deleteTree()', () => {
      it('removes a key; deleting an absent key is true', async () => {
        await store.put('k', 'v');
        assert.equal(await store.delete('k'), true);
        assert.equal(await store.get('k'), null);
        assert.equal(await store.delete('k'), true);
      });

      it('with cas deletes only at the matching modifyIndex', async () => {
        await store.put('k', 'one');
        const one = await entry('k');
        await store.put('k', 'two');
        assert.equal(await store.delete('k', { cas: one.modifyIndex }), false);
        assert.equal((await entry('k')).value.toString(), 'two');
        assert.equal(await store.delete('k', { cas: 0 }), false);
        assert.equal(await store.delete('k', { cas: (await entry('k')).modifyIndex }), true);
        assert.equal(await store.get('k'), null);
      });

      it('deletes by string prefix, not by folder', async () => {
        for (const key of ['ap', 'app', 'apple', 'apps/a', 'apps/b/c', 'b']) await store.put(key, key);
        await store.deleteTree('app');
        assert.deepEqual(await store.keys(''), ['ap', 'b']);
        await store.deleteTree('');
        assert.deepEqual(await store.keys(''), []);
      });

      it('recreates a deleted key with a new createIndex', async () => {
        await store.put('k', 'v');
        const first = await entry('k');
        await store.delete('k');
        await store.put('k', 'v');
        assert.ok((await entry('k')).createIndex > first.createIndex);
      });
    });

    describe('list() and keys()', () => {
      beforeEach(async () => {
        for (const key of ['apps/b', 'apps/a/x', 'apps/a/y', 'apps-archive', 'apps', 'ap', 'zz']) await store.put(key, `v:${key}`);
      });

      it('lists by string prefix, sorted by key', async () => {
        const entries = await store.list('apps');
        assert.deepEqual(
          entries.map((e) => e.key),
          ['apps', 'apps-archive', 'apps/a/x', 'apps/a/y', 'apps/b'],
        );
        assert.equal(entries[2]?.value.toString(), 'v:apps/a/x');
        assert.deepEqual((await store.list('')).length, 7);
        assert.deepEqual(await store.list('nothing/'), []);
      });

      it('sorts by UTF-8 bytes, as Consul does', async () => {
        // U+FF61 is EF BD A1 in UTF-8, U+1F600 is F0 9F 98 80: bytes put U+FF61 first (UTF-16 would not).
        await store.put('u/\u{1F600}', 'a');
        await store.put('u/\u{FF61}', 'b');
        assert.deepEqual(await store.keys('u/'), ['u/\u{FF61}', 'u/\u{1F600}']);
      });

      it('lists keys, and one level of them with a separator', async () => {
        assert.deepEqual(await store.keys('apps/'), ['apps/a/x', 'apps/a/y', 'apps/b']);
        assert.deepEqual(await store.keys('apps/', '/'), ['apps/a/', 'apps/b']);
        assert.deepEqual(await store.keys('', '/'), ['ap', 'apps', 'apps-archive', 'apps/', 'zz']);
      });
    });

    describe('index()', () => {
      it('is never 0 and grows with every write, deletes included', async () => {
        const seen = [await store.index()];
        assert.ok(seen[0]! >= 1);
        await store.put('a', '1');
        seen.push(await store.index());
        await store.put('a', '2');
        seen.push(await store.index());
        await store.delete('a');
        seen.push(await store.index());
        await store.put('t/1', 'x');
        seen.push(await store.index());
        await store.deleteTree('t/');
        seen.push(await store.index());
        for (let i = 1; i < seen.length; i++) assert.ok(seen[i]! > seen[i - 1]!, `index went ${seen.join(' → ')}`);
      });

      it('equals the modifyIndex of the latest write', async () => {
        await store.put('a', '1');
        await store.put('b', '1');
        assert.equal(await store.index(), (await entry('b')).modifyIndex);
      });
    });

    describe('watch()', () => {
      it('returns at once when the prefix changed after sinceIndex, or for index 0', async () => {
        const since = await store.index();
        await store.put('w/a', '1');
        assert.ok((await store.watch('w/', since)) >= (await entry('w/a')).modifyIndex);
        assert.ok((await store.watch('w/', 0)) >= 1);
      });

      it('wakes on a write under its prefix', async () => {
        const since = await store.index();
        const woke = store.watch('w/', since);
        await store.put('w/a', '1');
        assert.ok((await woke) >= (await entry('w/a')).modifyIndex);
      });

      it('wakes on a delete and a deleteTree under its prefix', async () => {
        await store.put('w/a', '1');
        await store.put('w/b', '1');
        let since = await store.index();
        const onDelete = store.watch('w/', since);
        await store.delete('w/a');
        const afterDelete = await onDelete;
        assert.ok(afterDelete > since);
        since = afterDelete;
        const onTree = store.watch('w/', since);
        await store.deleteTree('w/');
        assert.ok((await onTree) > since);
      });

      it('sees a delete that happened before the watch started', async () => {
        await store.put('w/a', '1');
        const since = await store.index();
        await store.delete('w/a');
        assert.ok((await store.watch('w/', since)) > since);
      });

      it('does not wake for changes outside its prefix', async () => {
        const since = await store.index();
        const woke = store.watch('w/', since);
        await store.put('other/x', '1');
        await store.put('w', 'parent, not under w/');
        await store.put('w/a', '1');
        // Had the watch returned for the first two writes, it would hold their (lower) index.
        assert.ok((await woke) >= (await entry('w/a')).modifyIndex);
      });

      it('returns the current index when the wait ends without a change', async () => {
        const since = await store.index();
        assert.ok((await store.watch('w/', since, { waitMs: 20 })) >= since);
      });

      it('rejects with the abort reason when its signal aborts', async () => {
        const controller = new AbortController();
        const waiting = store.watch('w/', await store.index(), { signal: controller.signal });
        controller.abort();
        await assert.rejects(waiting, { name: 'AbortError' });
        await assert.rejects(store.watch('w/', await store.index(), { signal: AbortSignal.abort() }), { name: 'AbortError' });
      });
    });

    describe('key and value rules', () => {
      const badKeys = [
        '',
        '/apps',
        'apps/../tokens',
        '..',
        'a/..',
        'a/./b',
        '.',
        'a//b',
        '//',
        'nul\u0000',
        'line\nbreak',
        'del\u007f',
        'lone\ud800',
        'x'.repeat(MAX_KEY_BYTES + 1),
        'é'.repeat(MAX_KEY_BYTES / 2 + 1),
      ];

      it('refuses invalid keys with state_key_invalid on every method', async () => {
        for (const key of badKeys) {
          await assertCode(store.put(key, 'v'), 'state_key_invalid', key);
          await assertCode(store.get(key), 'state_key_invalid', key);
          await assertCode(store.delete(key), 'state_key_invalid', key);
        }
        for (const prefix of badKeys.slice(1)) {
          await assertCode(store.list(prefix), 'state_key_invalid', prefix);
          await assertCode(store.keys(prefix), 'state_key_invalid', prefix);
          await assertCode(store.deleteTree(prefix), 'state_key_invalid', prefix);
          await assertCode(store.watch(prefix, 1, { waitMs: 1 }), 'state_key_invalid', prefix);
        }
        assert.deepEqual(await store.keys(''), []);
      });

      it('accepts keys up to 512 bytes, with dots, spaces and Unicode', async () => {
        for (const key of ['x'.repeat(MAX_KEY_BYTES), 'é'.repeat(MAX_KEY_BYTES / 2), 'a.b/.c', 'a..b/c', 'trailing/', 'a b/☃/\u{1F600}']) {
          assert.equal(await store.put(key, 'v'), true, key);
          assert.equal((await entry(key)).key, key);
        }
      });

      it('takes values up to 512 KiB and refuses larger ones with state_value_too_large', async () => {
        const index = await store.index();
        assert.equal(await store.put('big', Buffer.alloc(MAX_VALUE_BYTES, 1)), true);
        assert.equal((await entry('big')).value.length, MAX_VALUE_BYTES);
        const after = await store.index();
        await assertCode(store.put('big', Buffer.alloc(MAX_VALUE_BYTES + 1, 2)), 'state_value_too_large');
        await assertCode(store.put('big', 'é'.repeat(MAX_VALUE_BYTES / 2 + 1)), 'state_value_too_large');
        assert.ok(after > index);
        assert.equal(await store.index(), after);
        assert.equal((await entry('big')).value[0], 1);
      });
    });

    describe('close()', () => {
      it('finishes writes already queued, ends pending watches, then refuses everything with state_unavailable', async () => {
        const writes = Array.from({ length: 10 }, (_, i) => store.put(`k/${i}`, 'v'));
        const watchEnded = assertCode(store.watch('never/', await store.index()), 'state_unavailable');
        await store.close();
        assert.deepEqual(await Promise.all(writes), Array(10).fill(true));
        await watchEnded;
        await assertCode(store.get('k/1'), 'state_unavailable');
        await assertCode(store.put('k/1', 'v'), 'state_unavailable');
        await store.close();
      });
    });

    async function entry(key: string) {
      const found = await store.get(key);
      assert.ok(found, `${key} is stored`);
      return found;
    }
  });
}

/** Asserts that `promise` rejects with an SvcError of `code`. */
export async function assertCode(promise: Promise<unknown>, code: ErrorCode, what = ''): Promise<SvcError> {
  let caught: unknown;
  await promise.then(
    () => assert.fail(`expected ${code} ${what}`),
    (error: unknown) => {
      caught = error;
    },
  );
  assert.ok(caught instanceof SvcError, `expected an SvcError for ${what}, got ${String(caught)}`);
  assert.equal(caught.code, code, `${what}: ${caught.message}`);
  return caught;
}
