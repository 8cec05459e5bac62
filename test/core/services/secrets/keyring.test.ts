import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Keyring, keyIdOf } from '../../../../core/services/secrets/keyring.js';

const key = () => randomBytes(32);
const AAD = 'svc secret\0acme\0db\0DATABASE_URL';

/** Flips one bit of the base64url part `index` of a sealed value. */
function flip(sealed: string, index: number): string {
  const parts = sealed.split('.');
  const bytes = Buffer.from(parts[index]!, 'base64url');
  bytes[0]! ^= 1;
  parts[index] = bytes.toString('base64url');
  return parts.join('.');
}

function refusedAs(open: () => unknown, pattern: RegExp): void {
  assert.throws(open, (error: { code?: string; message: string }) => error.code === 'secrets_key_invalid' && pattern.test(error.message));
}

describe('Keyring', () => {
  it('seals with AES-256-GCM under a fresh nonce each time and opens what it sealed', () => {
    const ring = new Keyring([key()]);
    const a = ring.seal('postgres://u:p@db/x', AAD);
    const b = ring.seal('postgres://u:p@db/x', AAD);
    assert.notEqual(a, b, 'two seals of one value differ (random nonce)');
    assert.equal(a.split('.')[0], 'v1');
    assert.equal(a.split('.')[1], ring.currentId, 'the sealed value names its key');
    assert.equal(Buffer.from(a.split('.')[2]!, 'base64url').length, 12, '96-bit nonce');
    assert.ok(!a.includes('postgres'));
    assert.equal(ring.open(a, AAD), 'postgres://u:p@db/x');
    assert.equal(ring.open(ring.seal('', AAD), AAD), '', 'an empty value too');
  });

  it('refuses a tampered ciphertext, tag or nonce', () => {
    const ring = new Keyring([key()]);
    const sealed = ring.seal('value', AAD);
    refusedAs(() => ring.open(flip(sealed, 3), AAD), /fails authentication/);
    refusedAs(() => ring.open(flip(sealed, 2), AAD), /fails authentication/);
    const cut = sealed.split('.');
    cut[3] = cut[3]!.slice(0, 4);
    refusedAs(() => ring.open(cut.join('.'), AAD), /wrong length/);
    refusedAs(() => ring.open('not sealed', AAD), /not a sealed value/);
  });

  it('refuses a value moved to another workspace, secret or key (the additional data differs)', () => {
    const ring = new Keyring([key()]);
    const sealed = ring.seal('value', AAD);
    for (const other of ['svc secret\0other\0db\0DATABASE_URL', 'svc secret\0acme\0db2\0DATABASE_URL', 'svc secret\0acme\0db\0OTHER']) {
      refusedAs(() => ring.open(sealed, other), /moved from another workspace/);
    }
  });

  it('refuses a value under a key it does not hold, naming the key id, and one under a wrong key of the same id', () => {
    const sealed = new Keyring([key()]).seal('value', AAD);
    const other = new Keyring([key()]);
    refusedAs(() => other.open(sealed, AAD), new RegExp(`sealed with key ${sealed.split('.')[1]}`));
    // A forged id: the other ring's key under the first ring's id still fails authentication.
    const forged = sealed.split('.');
    forged[1] = other.currentId;
    refusedAs(() => other.open(forged.join('.'), AAD), /fails authentication/);
  });

  it('rotates: the first key seals, the old ones still open what they sealed', () => {
    const [oldKey, newKey] = [key(), key()];
    const before = new Keyring([oldKey]).seal('old value', AAD);
    const rotated = new Keyring([newKey, oldKey]);
    assert.equal(rotated.currentId, keyIdOf(newKey));
    assert.equal(rotated.open(before, AAD), 'old value');
    const after = rotated.seal('new value', AAD);
    assert.equal(Keyring.keyIdOf(after), keyIdOf(newKey));
    assert.equal(new Keyring([newKey]).open(after, AAD), 'new value', 'the new key alone opens what it sealed');
    refusedAs(() => new Keyring([newKey]).open(before, AAD), /does not hold/);
  });

  it('takes only 32-byte keys', () => {
    assert.throws(() => new Keyring([randomBytes(16)]), /32 bytes/);
    assert.throws(() => new Keyring([]), /at least one key/);
  });
});
