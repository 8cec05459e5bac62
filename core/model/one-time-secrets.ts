/**
 * One-time secrets other than API tokens (sign-in links, device codes):
 * long, random, URL-safe, and stored only as their SHA-256 hash.
 */
import { createHash, randomBytes } from 'node:crypto';

/** 32 random bytes as base64url: 43 characters, 256 bits. */
export function randomSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** SHA-256, hex. No salt or slow KDF: the inputs are long random secrets, not passwords. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** True for a string of the shape `randomSecret` makes; lets callers reject junk before hashing it. */
export function looksLikeSecret(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{43}$/.test(value);
}
