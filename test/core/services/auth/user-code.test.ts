import assert from 'node:assert/strict';
import { formatUserCode, generateUserCode, normalizeUserCode, USER_CODE_ALPHABET } from '../../../../core/services/auth/user-code.js';

describe('user codes', () => {
  it('are 8 characters of the RFC 8628 base-20 alphabet, every letter of it in use', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 500; i++) {
      const code = generateUserCode();
      assert.match(code, /^[BCDFGHJKLMNPQRSTVWXZ]{8}$/);
      for (const char of code) seen.add(char);
    }
    assert.equal(USER_CODE_ALPHABET, 'BCDFGHJKLMNPQRSTVWXZ');
    assert.equal(seen.size, 20);
  });

  it('are shown as XXXX-XXXX', () => {
    assert.equal(formatUserCode('BCDFGHJK'), 'BCDF-GHJK');
  });

  it('are read back whatever the case, with or without hyphens and spaces', () => {
    for (const typed of ['BCDF-GHJK', 'bcdf-ghjk', 'BCDFGHJK', 'bcdf ghjk', ' Bc-Df Gh-jK '])
      assert.equal(normalizeUserCode(typed), 'BCDFGHJK', typed);
  });

  it('are refused with a reason when they cannot be a code', () => {
    assert.throws(() => normalizeUserCode('BCDF-GHJKL'), { code: 'bad_request', message: /has 9 letters/ });
    assert.throws(() => normalizeUserCode('BCDF-GHJ1'), { code: 'bad_request', message: /has "1", which codes never contain/ });
    assert.throws(() => normalizeUserCode('BCDF-GHJE'), { code: 'bad_request', message: /has "E"/ });
    assert.throws(() => normalizeUserCode(undefined), { code: 'bad_request', message: /must be a string/ });
  });
});
