import assert from 'node:assert/strict';
import { generateToken, hashToken } from '../../../../core/services/auth/tokens.js';
import { MemoryTokenVerifier } from '../../../../core/services/auth/verifier.js';

describe('MemoryTokenVerifier#verify()', () => {
  it('returns the principal of a known token, with its id', async () => {
    const verifier = new MemoryTokenVerifier();
    const { secret, id } = generateToken();
    verifier.add(secret, { workspace: 'acme', subject: 'alice' });
    assert.deepEqual(await verifier.verify(secret), { workspace: 'acme', subject: 'alice', tokenId: id });
  });

  it('returns null for unknown and malformed tokens', async () => {
    const verifier = new MemoryTokenVerifier();
    verifier.add(generateToken().secret, { workspace: 'acme', subject: 'alice' });
    assert.equal(await verifier.verify(generateToken().secret), null);
    assert.equal(await verifier.verify('not-a-token'), null);
    assert.equal(await verifier.verify(''), null);
  });

  it('accepts tokens registered by hash only', async () => {
    const verifier = new MemoryTokenVerifier();
    const { secret } = generateToken();
    verifier.addHash(hashToken(secret), { workspace: 'acme', subject: 'ci' });
    assert.equal((await verifier.verify(secret))?.subject, 'ci');
  });

  it('refuses to register a secret that is not a token', () => {
    assert.throws(() => new MemoryTokenVerifier().add('hunter2', { workspace: 'acme', subject: 'x' }), { code: 'config_invalid' });
  });
});

describe('MemoryTokenVerifier#revoke()', () => {
  it('revokes at once by id or by hash', async () => {
    const verifier = new MemoryTokenVerifier();
    const first = generateToken();
    const second = generateToken();
    verifier.add(first.secret, { workspace: 'acme', subject: 'a' });
    verifier.add(second.secret, { workspace: 'acme', subject: 'b' });
    assert.equal(verifier.revoke(first.id), true);
    assert.equal(verifier.revoke(hashToken(second.secret)), true);
    assert.equal(await verifier.verify(first.secret), null);
    assert.equal(await verifier.verify(second.secret), null);
  });

  it('returns false when nothing matched', () => {
    assert.equal(new MemoryTokenVerifier().revoke('tok_000000000000'), false);
  });
});
