import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { generateToken, hashToken, looksLikeToken, tokenIdOf } from '../../../../core/services/auth/tokens.js';

describe('generateToken()', () => {
  it('returns "svc_" and 40 base62 characters, with a "tok_" id from its hash', () => {
    const { secret, id } = generateToken();
    assert.match(secret, /^svc_[0-9A-Za-z]{40}$/);
    assert.equal(id, `tok_${hashToken(secret).slice(0, 12)}`);
    assert.match(id, /^tok_[0-9a-f]{12}$/);
  });

  it('never repeats itself and uses the whole alphabet', () => {
    const secrets = Array.from({ length: 200 }, () => generateToken().secret);
    assert.equal(new Set(secrets).size, secrets.length);
    const characters = new Set(secrets.join('').replaceAll('svc_', ''));
    assert.equal(characters.size, 62);
  });
});

describe('hashToken()', () => {
  it('is the SHA-256 hex digest of the secret', () => {
    const secret = generateToken().secret;
    assert.equal(hashToken(secret), createHash('sha256').update(secret).digest('hex'));
    assert.equal(hashToken(secret), hashToken(secret));
  });
});

describe('tokenIdOf()', () => {
  it('is stable for a hash and reveals only its first 12 hex digits', () => {
    assert.equal(tokenIdOf('0123456789abcdef'.repeat(4)), 'tok_0123456789ab');
  });
});

describe('looksLikeToken()', () => {
  it('accepts the token shape only', () => {
    assert.equal(looksLikeToken(generateToken().secret), true);
    assert.equal(looksLikeToken(`svc_${'a'.repeat(39)}`), false);
    assert.equal(looksLikeToken(`svc_${'a'.repeat(41)}`), false);
    assert.equal(looksLikeToken(`svc_${'a'.repeat(39)}-`), false);
    assert.equal(looksLikeToken(`SVC_${'a'.repeat(40)}`), false);
    assert.equal(looksLikeToken(` svc_${'a'.repeat(40)}`), false);
  });
});
