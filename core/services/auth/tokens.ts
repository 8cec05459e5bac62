/**
 * API tokens: random secrets shown once, stored only as SHA-256 hashes, and
 * referred to by a non-secret id derived from the hash.
 */
import { hash, randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = 40; // 40 × log2(62) ≈ 238 bits of entropy
const TOKEN_PATTERN = /^svc_[0-9A-Za-z]{40}$/;

export interface GeneratedToken {
  /** `svc_` + 40 base62 characters. Show it once; never store it. */
  readonly secret: string;
  /** `tok_` + the first 12 hex digits of the hash: stable, safe to log and list. */
  readonly id: string;
}

export function generateToken(): GeneratedToken {
  let body = '';
  while (body.length < SECRET_LENGTH) {
    for (const byte of randomBytes(SECRET_LENGTH)) {
      // Reject bytes ≥ 248 (= 4 × 62) so that `byte % 62` is uniform.
      if (byte < 248 && body.length < SECRET_LENGTH) body += BASE62[byte % 62];
    }
  }
  const secret = `svc_${body}`;
  return { secret, id: tokenIdOf(hashToken(secret)) };
}

/** SHA-256 of the secret, hex. Enough without a salt or a slow KDF: secrets are long and random, not passwords. */
export function hashToken(secret: string): string {
  // One-shot: a third of createHash()'s cost, paid on every gateway request.
  return hash('sha256', secret, 'hex');
}

/** The public id of the token with this hash. */
export function tokenIdOf(hash: string): string {
  return `tok_${hash.slice(0, 12)}`;
}

/** True when `value` has the shape of an svc token secret (says nothing about whether it is valid). */
export function looksLikeToken(value: string): boolean {
  return TOKEN_PATTERN.test(value);
}
