import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, statSync, writeFileSync, existsSync, chmodSync } from 'node:fs';
import path from 'node:path';
import type { SvcError } from '../../../../core/model/errors.js';
import { createMemoryStateStore } from '../../../../core/infra/state/memory-store.js';
import { openKeySource, parseKeys } from '../../../../core/services/secrets/key-source.js';
import { Keyring } from '../../../../core/services/secrets/keyring.js';
import { Secrets } from '../../../../core/services/secrets/secrets.js';
import { tempDir } from '../../../helpers/config.js';

const principal = { subject: 'acc_0000000000000001', workspace: 'acme' };
const ringOf =
  (...keys: Buffer[]) =>
  async () =>
    new Keyring(keys);
const scope = { workspace: 'acme', app: 'shop', stage: 'deployed' };

async function refused(work: Promise<unknown>, code: string, pattern?: RegExp): Promise<SvcError> {
  const error = await work.then(
    () => assert.fail('expected a refusal'),
    (e: unknown) => e as SvcError,
  );
  assert.equal(error.code, code, error.message);
  if (pattern) assert.match(error.message, pattern);
  return error;
}

describe('Secrets', () => {
  it('stores values sealed, lists keys only, and gives values only to environment()', async () => {
    const store = createMemoryStateStore();
    const secrets = new Secrets(store, ringOf(randomBytes(32)));
    const view = await secrets.create('acme', 'db', { DATABASE_URL: 'postgres://x', POOL: '5' }, principal);
    assert.deepEqual(view.keys, ['DATABASE_URL', 'POOL']);
    assert.ok(!JSON.stringify(view).includes('postgres'));
    const raw = (await store.get('secrets/acme/db'))!.value.toString();
    assert.ok(!raw.includes('postgres://x'), 'the store holds no value in clear');
    assert.deepEqual(await secrets.list('acme'), [view]);
    assert.deepEqual(await secrets.list('other'), []);
    assert.deepEqual(await secrets.environment(scope, ['db']), { DATABASE_URL: 'postgres://x', POOL: '5' });
  });

  it('sets and removes keys, a later secret winning in environment()', async () => {
    const secrets = new Secrets(createMemoryStateStore(), ringOf(randomBytes(32)));
    await secrets.create('acme', 'a', { X: '1', Y: '1' }, principal);
    await secrets.create('acme', 'b', { Y: '2' }, principal);
    await secrets.set('acme', 'a', { Z: '3' }, principal, ['X']);
    assert.deepEqual(await secrets.environment(scope, ['a', 'b']), { Y: '2', Z: '3' });
    await refused(secrets.set('acme', 'a', {}, principal, ['Nope']), 'bad_request', /no key "Nope"/);
    await refused(secrets.set('acme', 'a', {}, principal, ['Y', 'Z']), 'bad_request', /no key left/);
    await refused(secrets.set('acme', 'a', { Y: 'new' }, principal, ['Y']), 'bad_request', /Y is both set and removed/);
    // A name from a URL: refused as a name, not as a state key that shows the store's layout.
    await refused(secrets.get('acme', '../other/a'), 'name_invalid', /secret name/);
  });

  it('refuses bad names, keys, values and sizes, never quoting a value', async () => {
    const secrets = new Secrets(createMemoryStateStore(), ringOf(randomBytes(32)));
    await refused(secrets.create('acme', 'Bad_Name', { A: 'v' }, principal), 'name_invalid');
    const value = 'hush-hush-value';
    for (const [values, pattern] of [
      [{ '1BAD': value }, /"1BAD" is not an environment variable name/],
      [{ 'A-B': value }, /"A-B"/],
      [{ SVC_TOKEN: value }, /svc sets in every worker/],
      [{ PYTHONPATH: value }, /svc sets/],
      [{ A: 7 }, /value of A must be a string/],
      [{ A: 'x'.repeat(40_000) }, /value of A is 40000 bytes/],
      [{ A: 'a\0b' }, /NUL/],
      [Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`K${i}`, value])), /at most 100 keys/],
      [{}, /at least one/],
    ] as const) {
      const error = await refused(secrets.create('acme', 'db', values, principal), 'bad_request', pattern);
      assert.ok(!error.message.includes(value) && !(error.hint ?? '').includes(value));
    }
  });

  it('refuses an existing name unless replace, and names every missing secret (422) for a deploy', async () => {
    const secrets = new Secrets(createMemoryStateStore(), ringOf(randomBytes(32)));
    await secrets.create('acme', 'db', { A: '1' }, principal);
    await refused(secrets.create('acme', 'db', { B: '2' }, principal), 'conflict');
    assert.deepEqual((await secrets.create('acme', 'db', { B: '2' }, principal, { replace: true })).keys, ['B']);
    const missing = await refused(secrets.check('acme', ['db', 'one', 'two']), 'secret_not_found', /"one", "two"/);
    assert.equal(missing.status, 422);
    await secrets.check('acme', ['db', '@0']);
    await refused(secrets.check('other', ['db']), 'secret_not_found');
    assert.equal((await refused(secrets.delete('other', 'db'), 'secret_not_found')).status, 404);
    await secrets.delete('acme', 'db');
    await refused(secrets.delete('acme', 'db'), 'secret_not_found');
  });

  it('keeps inline values per scope, replaced by the next deploy and forgotten with the app', async () => {
    const store = createMemoryStateStore();
    const secrets = new Secrets(store, ringOf(randomBytes(32)));
    await secrets.putInline(scope, [{ A: 'one' }, { B: 'two' }]);
    assert.deepEqual(await secrets.environment(scope, ['@1', '@0']), { B: 'two', A: 'one' });
    await secrets.putInline(scope, [{ A: 'three' }]);
    assert.deepEqual(await store.keys('secrets-inline/'), ['secrets-inline/acme/shop/deployed/0']);
    await refused(secrets.environment({ ...scope, app: 'other' }, ['@0']), 'secret_not_found');
    await secrets.forgetInline(scope);
    assert.deepEqual(await store.keys('secrets-inline/'), []);
  });

  it('refuses a value moved to another secret or workspace in the store', async () => {
    const store = createMemoryStateStore();
    const secrets = new Secrets(store, ringOf(randomBytes(32)));
    await secrets.create('acme', 'db', { A: 'one' }, principal);
    await secrets.create('acme', 'other', { A: 'two' }, principal);
    const moved = JSON.parse((await store.get('secrets/acme/db'))!.value.toString());
    const target = JSON.parse((await store.get('secrets/acme/other'))!.value.toString());
    await store.put('secrets/acme/other', JSON.stringify({ ...target, sealed: moved.sealed }));
    await refused(secrets.environment(scope, ['other']), 'secrets_key_invalid', /moved from another/);
  });

  it('seals everything again under the new key after a rotation, so that the old key can go', async () => {
    const store = createMemoryStateStore();
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    await new Secrets(store, ringOf(oldKey)).create('acme', 'db', { A: 'one', B: 'two' }, principal);
    await new Secrets(store, ringOf(oldKey)).putInline(scope, [{ C: 'three' }]);
    const rotated = new Secrets(store, ringOf(newKey, oldKey));
    assert.deepEqual(await rotated.reseal(), { secrets: 2, values: 3 });
    assert.deepEqual(await rotated.reseal(), { secrets: 0, values: 0 }, 'nothing left under the old key');
    const newOnly = new Secrets(store, ringOf(newKey));
    assert.deepEqual(await newOnly.environment(scope, ['db', '@0']), { A: 'one', B: 'two', C: 'three' });
    await refused(new Secrets(store, ringOf(oldKey)).environment(scope, ['db']), 'secrets_key_invalid', /does not hold/);
  });
});

describe('openKeySource()', () => {
  const key = randomBytes(32).toString('base64');

  it('on Consul without a key, starts but refuses every seal and open, with a hint on how to make one', async () => {
    const source = await openKeySource({ secretsKey: null, secretsKeyFile: null, dataDir: tempDir(), state: 'consul' });
    for (const purpose of ['seal', 'open'] as const) {
      const error = await refused(source(purpose), 'secrets_key_invalid', /same key/);
      assert.match(error.hint!, /head -c 32 \/dev\/urandom \| base64/);
    }
  });

  it('creates <data dir>/secrets.key (0600) on the first seal only, outside the state folder, and reads it back', async () => {
    const dataDir = tempDir();
    const file = path.join(dataDir, 'secrets.key');
    const source = await openKeySource({ secretsKey: null, secretsKeyFile: null, dataDir, state: 'file' });
    await refused(source('open'), 'secrets_key_invalid', /missing/);
    assert.equal(existsSync(file), false, 'nothing sealed yet: no key file');
    const ring = await source('seal');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const sealed = ring.seal('v', 'aad');
    const again = await (await openKeySource({ secretsKey: null, secretsKeyFile: null, dataDir, state: 'file' }))('open');
    assert.equal(again.open(sealed, 'aad'), 'v');
  });

  it('takes keys from secretsKey (comma-separated) or a key file (lines, # comments), the first sealing', async () => {
    const second = randomBytes(32).toString('base64');
    const fromEnv = await (
      await openKeySource({ secretsKey: `${key}, ${second}`, secretsKeyFile: null, dataDir: tempDir(), state: 'consul' })
    )('seal');
    assert.equal(fromEnv.ids.length, 2);
    const dir = tempDir();
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'keys');
    writeFileSync(file, `# new\n${second}\n# old\n${key}\n`, { mode: 0o600 });
    const fromFile = await (await openKeySource({ secretsKey: null, secretsKeyFile: file, dataDir: tempDir(), state: 'consul' }))('seal');
    assert.deepEqual(fromFile.ids, [...fromEnv.ids].reverse());
    chmodSync(file, 0o644);
    await refused(
      openKeySource({ secretsKey: null, secretsKeyFile: file, dataDir: tempDir(), state: 'consul' }),
      'config_invalid',
      /other users/,
    );
  });

  it('refuses a key that is not 32 bytes of base64, without printing it', () => {
    assert.throws(
      () => parseKeys('c2hvcnQ=', 'SVC_SECRETS_KEY'),
      (e: SvcError) => e.code === 'config_invalid' && /5 bytes/.test(e.message) && !e.message.includes('c2hvcnQ'),
    );
    assert.throws(() => parseKeys('  # nothing\n', 'SVC_SECRETS_KEY'), /holds no secrets key/);
  });
});
