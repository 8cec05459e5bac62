/**
 * The token verifier backed by the state store, through the in-memory
 * `TokenIndex`: no store round trip per request, and a revoked token is
 * refused from the moment `Tokens#revoke` returns (see token-index.ts).
 */
import type { Principal } from '../../model/principal.js';
import { systemClock, type Clock } from '../../model/clock.js';
import type { TokenIndex } from './token-index.js';
import type { TokenUsage, TokenUser } from './token-usage.js';
import { hashToken, looksLikeToken } from './tokens.js';
import type { TokenVerifier } from './verifier.js';

/** Hashes kept of the secrets presented lately; the map starts over when it is full. */
const MAX_HASHES = 1024;

export class StoreTokenVerifier implements TokenVerifier {
  readonly #index: TokenIndex;
  readonly #clock: Clock;
  readonly #usage: TokenUsage | null;
  /**
   * The hash of each secret that named a known token lately: a client sends
   * the same token with every request, and its SHA-256 was the dearest step
   * of a gateway request's own work. Only a secret that matched enters, so
   * made-up ones cannot crowd the map; the index is still asked every time,
   * so a revoked token is refused as before.
   */
  readonly #hashes = new Map<string, string>();

  /** `usage`, when given, notes each successful use (for "last used" in the token lists). */
  constructor(index: TokenIndex, clock: Clock = systemClock, usage: TokenUsage | null = null) {
    this.#index = index;
    this.#clock = clock;
    this.#usage = usage;
  }

  /** Synchronous: a hash (or a Map lookup of it) and a Map lookup, on every gateway request. */
  verify(secret: string): Principal | null {
    if (typeof secret !== 'string') return null;
    let hash = this.#hashes.get(secret);
    const remembered = hash !== undefined;
    if (hash === undefined) {
      if (!looksLikeToken(secret)) return null; // cheap reject before hashing arbitrary input
      hash = hashToken(secret);
    }
    const token = this.#index.lookup(hash);
    if (token === undefined) {
      this.#hashes.delete(secret);
      return null;
    }
    if (!remembered) {
      if (this.#hashes.size >= MAX_HASHES) this.#hashes.clear();
      this.#hashes.set(secret, hash);
    }
    const now = this.#clock();
    if (token.expiresAtMs !== null && now >= token.expiresAtMs) return null;
    if (token.principal.tokenId !== undefined) this.#usage?.touch(token.principal as TokenUser, now);
    return token.principal;
  }
}
