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

export class StoreTokenVerifier implements TokenVerifier {
  readonly #index: TokenIndex;
  readonly #clock: Clock;
  readonly #usage: TokenUsage | null;

  /** `usage`, when given, notes each successful use (for "last used" in the token lists). */
  constructor(index: TokenIndex, clock: Clock = systemClock, usage: TokenUsage | null = null) {
    this.#index = index;
    this.#clock = clock;
    this.#usage = usage;
  }

  /** Synchronous: a hash and a Map lookup, on every gateway request. */
  verify(secret: string): Principal | null {
    if (typeof secret !== 'string' || !looksLikeToken(secret)) return null; // cheap reject before hashing arbitrary input
    const token = this.#index.lookup(hashToken(secret));
    if (token === undefined) return null;
    const now = this.#clock();
    if (token.expiresAtMs !== null && now >= token.expiresAtMs) return null;
    if (token.principal.tokenId !== undefined) this.#usage?.touch(token.principal as TokenUser, now);
    return token.principal;
  }
}
