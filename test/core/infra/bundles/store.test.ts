import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { BundleStore } from '../../../../core/infra/bundles/store.js';
import { SvcError } from '../../../../core/model/errors.js';
import { tempDir } from '../../../helpers/config.js';
import { tarGz } from './tar-writer.js';

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function fileWith(bytes: Buffer): string {
  const file = path.join(tempDir('svc-in-'), 'bundle.tar.gz');
  writeFileSync(file, bytes);
  return file;
}

describe('BundleStore', () => {
  const bytes = tarGz({ name: 'app.py', data: 'print(1)\n' });

  it('keeps a bundle at <dataDir>/bundles/<sha256>.tar.gz', async () => {
    const dataDir = tempDir('svc-data-');
    const store = BundleStore.inDataDir(dataDir);
    const stored = await store.put(fileWith(bytes));
    assert.deepEqual(stored, {
      sha256: sha(bytes),
      path: path.join(dataDir, 'bundles', `${sha(bytes)}.tar.gz`),
      size: bytes.length,
      existed: false,
    });
    assert.deepEqual(readFileSync(stored.path), bytes);
    assert.equal(await store.has(sha(bytes)), true);
    assert.deepEqual(readdirSync(store.dir), [`${sha(bytes)}.tar.gz`], 'no temporary file is left');
  });

  it('accepts a bundle whose announced sha256 matches, and stores it once', async () => {
    const store = BundleStore.inDataDir(tempDir('svc-data-'));
    assert.equal((await store.put(fileWith(bytes), sha(bytes))).existed, false);
    assert.equal((await store.putStream(Readable.from([bytes]), sha(bytes))).existed, true);
    assert.equal(readdirSync(store.dir).length, 1);
  });

  it('refuses a bundle whose content does not match the announced sha256, keeping nothing', async () => {
    const store = BundleStore.inDataDir(tempDir('svc-data-'));
    const claimed = sha(Buffer.from('something else'));
    await assert.rejects(store.put(fileWith(bytes), claimed), (error: unknown) => {
      assert.ok(error instanceof SvcError);
      assert.equal(error.code, 'bundle_invalid');
      assert.match(error.message, new RegExp(`sha256 is ${sha(bytes)}, not ${claimed}`));
      assert.equal((error.details as { rule: string }).rule, 'sha256_mismatch');
      return true;
    });
    assert.deepEqual(readdirSync(store.dir), []);
    assert.equal(await store.has(claimed), false);
  });

  it('trusts a bundle it found for seenForMs, then asks the disk again; an upload always asks the disk', async () => {
    const store = new BundleStore(path.join(tempDir('svc-data-'), 'bundles'), { seenForMs: 200 });
    const stored = await store.put(fileWith(bytes));
    assert.equal(await store.has(stored.sha256), true);
    rmSync(stored.path); // an operator removes it
    assert.equal(await store.has(stored.sha256), true, 'seen less than seenForMs ago');
    assert.equal((await store.put(fileWith(bytes))).existed, false, 'the upload finds it gone and writes it again');
    assert.deepEqual(readFileSync(stored.path), bytes);
    rmSync(stored.path);
    await new Promise((resolve) => setTimeout(resolve, 250));
    assert.equal(await store.has(stored.sha256), false, 'asked again once seenForMs passed');
  });

  it('refuses names that are not a sha256, so no path can be smuggled in', () => {
    const store = new BundleStore(tempDir());
    for (const bad of ['../../etc/passwd', 'ABC', `${'a'.repeat(64)}/x`, 'A'.repeat(64)]) {
      assert.throws(
        () => store.pathOf(bad),
        (error: unknown) => error instanceof SvcError && error.code === 'bad_request',
      );
    }
  });

  it('verify() notices a stored bundle that was changed on disk', async () => {
    const store = BundleStore.inDataDir(tempDir('svc-data-'));
    const stored = await store.put(fileWith(bytes));
    await store.verify(stored.sha256);
    writeFileSync(stored.path, 'tampered');
    await assert.rejects(
      store.verify(stored.sha256),
      (error: unknown) => error instanceof SvcError && error.code === 'bundle_invalid' && /no longer matches/.test(error.message),
    );
  });

  it('rejects the put of a file that is not there, never as an error event nobody listens to (an uncaught error ends svc)', async () => {
    const store = BundleStore.inDataDir(tempDir('svc-data-'));
    await assert.rejects(store.put(path.join(tempDir('svc-gone-'), 'gone.tar.gz'), sha(bytes)), { code: 'ENOENT' });
    assert.equal(await store.has(sha(bytes)), false);
  });
});
