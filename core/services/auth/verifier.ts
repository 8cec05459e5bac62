/**
 * Token verification: secret → principal. The interface lets the control
 * plane back it with its state store; the memory implementation serves tests
 * and the embedded owner token.
 */
import { SvcError } from '../../model/errors.js';
import type { Principal } from '../../model/principal.js';
import { hashToken, looksLikeToken, tokenIdOf } from './tokens.js';

export interface TokenVerifier {
  /** The principal the secret belongs to, or null when it is malformed, unknown or revoked. */
  /** Synchronous where it can be: the gateway then checks a token without a promise. */
  verify(secret: string): Principal | null | Promise<Principal | null>;
}

/** Who a token acts as. */
export interface TokenGrant {
  readonly workspace: string;
  readonly subject: string;
}

/**
 * Holds only hashes, in a Map keyed by hash. A Map lookup is not
 * constant-time, but what it could leak is how the hash of the *presented*
 * secret compares to stored hashes; SHA-256 is preimage resistant, so that
 * does not help to forge a secret, and `timingSafeEqual` over every entry
 * would buy nothing but a linear scan.
 */
export class MemoryTokenVerifier implements TokenVerifier {
  readonly #byHash = new Map<string, Principal>();

  /** Registers a token by its secret, which is hashed at once and not kept. Returns its principal. */
  add(secret: string, grant: TokenGrant): Principal {
    // verify() rejects anything else, so such a token could never be used: say so now.
    if (!looksLikeToken(secret)) throw new SvcError('config_invalid', 'not an svc token (expected "svc_" and 40 letters or digits)');
    return this.addHash(hashToken(secret), grant);
  }

  /** Registers a token by its SHA-256 hex hash (`hashToken`), as a store that never saw the secret holds it. Re-adding a hash replaces its grant. */
  addHash(hash: string, grant: TokenGrant): Principal {
    const principal: Principal = Object.freeze({ workspace: grant.workspace, subject: grant.subject, tokenId: tokenIdOf(hash) });
    this.#byHash.set(hash, principal);
    return principal;
  }

  /** Revokes at once, by token id (`tok_…`) or hash. Returns false when nothing matched. */
  revoke(idOrHash: string): boolean {
    if (this.#byHash.delete(idOrHash)) return true;
    for (const [hash, principal] of this.#byHash) {
      if (principal.tokenId === idOrHash) return this.#byHash.delete(hash);
    }
    return false;
  }

  verify(secret: string): Principal | null {
    if (!looksLikeToken(secret)) return null; // cheap reject before hashing arbitrary input
    return this.#byHash.get(hashToken(secret)) ?? null;
  }
}
