/**
 * The token verifier backed by the state store, through the in-memory
 * `TokenIndex`: no store round trip per request, and a revoked token is
 * refused from the moment `Tokens#revoke` returns (see token-index.ts).
 */
import type { Principal } from '../plugin/types.js';
import { systemClock, type Clock } from './clock.js';
import type { TokenIndex } from './token-index.js';
import { hashToken, looksLikeToken } from './tokens.js';
import type { TokenVerifier } from './verifier.js';

export class StoreTokenVerifier implements TokenVerifier {
  readonly #index: TokenIndex;
  readonly #clock: Clock;

  constructor(index: TokenIndex, clock: Clock = systemClock) {
    this.#index = index;
    this.#clock = clock;
  }

  async verify(secret: string): Promise<Principal | null> {
    if (typeof secret !== 'string' || !looksLikeToken(secret)) return null; // cheap reject before hashing arbitrary input
    const token = this.#index.lookup(hashToken(secret));
    if (token === undefined) return null;
    if (token.expiresAtMs !== null && this.#clock() >= token.expiresAtMs) return null;
    return token.principal;
  }
}
