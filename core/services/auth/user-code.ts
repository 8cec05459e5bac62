/**
 * User codes of the device flow (RFC 8628 §6.1): 8 characters from the
 * RFC's base-20 alphabet (consonants without vowels, so no words, and none
 * that look alike), shown as `XXXX-XXXX`. 20^8 ≈ 2.6 × 10^10 codes, which
 * with a 10-minute lifetime and rate-limited guesses is the RFC's example.
 */
import { randomBytes } from 'node:crypto';
import { SvcError } from '../../model/errors.js';

export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;

/** A fresh code in its stored form: 8 characters, no hyphen. */
export function generateUserCode(): string {
  let code = '';
  while (code.length < USER_CODE_LENGTH) {
    for (const byte of randomBytes(16)) {
      // Reject bytes ≥ 240 (= 12 × 20) so that `byte % 20` is uniform.
      if (byte < 240 && code.length < USER_CODE_LENGTH) code += USER_CODE_ALPHABET[byte % 20];
    }
  }
  return code;
}

/** How people see it: `BCDF-GHJK`. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * What someone typed, in stored form: case does not matter, and hyphens and
 * spaces anywhere are ignored (`bcdf ghjk`, `BCDFGHJK`). `bad_request` with
 * what is wrong otherwise.
 */
export function normalizeUserCode(input: unknown): string {
  if (typeof input !== 'string') throw invalid(`the code must be a string, not ${typeof input}`);
  const code = input.toUpperCase().replace(/[\s-]+/g, '');
  if (code.length !== USER_CODE_LENGTH) {
    throw invalid(`the code ${JSON.stringify(input)} has ${code.length} letters; a code has ${USER_CODE_LENGTH}, like BCDF-GHJK`);
  }
  const stray = [...code].find((char) => !USER_CODE_ALPHABET.includes(char));
  if (stray !== undefined) {
    throw invalid(
      `the code ${JSON.stringify(input)} has ${JSON.stringify(stray)}, which codes never contain (only the consonants ${USER_CODE_ALPHABET})`,
    );
  }
  return code;
}

function invalid(message: string): SvcError {
  return new SvcError('bad_request', message, {
    hint: 'Type the code `svc login` printed, e.g. BCDF-GHJK.',
    details: { field: 'user_code' },
  });
}
