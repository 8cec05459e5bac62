/**
 * Creating, listing and revoking API tokens. Every operation acts in the
 * workspace of the caller's principal and nowhere else, so a credential of
 * one workspace cannot even name another workspace's tokens.
 */
import type { Account, Role } from '../accounts/types.js';
import { SvcError } from '../../model/errors.js';
import type { Principal } from '../../model/principal.js';
import { getJson, putJson } from '../../model/store/json.js';
import type { StateStore } from '../../model/store/types.js';
import { DEFAULT_WORKSPACE_NAME } from '../workspaces/types.js';
import type { Workspaces } from '../workspaces/workspaces.js';
import { isoAt, systemClock, type Clock } from '../../model/clock.js';
import { storedJson } from '../../model/store/stored-fields.js';
import type { TokenIndex } from './token-index.js';
import { checkTokenExpiry, checkTokenName } from './token-input.js';
import { parseTokenRecord, tokenInfo, tokenKey, workspaceTokensPrefix, type TokenInfo, type TokenRecord } from './token-records.js';
import { generateToken, hashToken, looksLikeToken, tokenIdOf } from './tokens.js';
import { TokenUsage } from './token-usage.js';

export interface CreateTokenInput {
  /** Optional, 1–100 characters. */
  readonly name?: unknown;
  /** Optional ISO 8601 date-time, in the future and at most one year away. */
  readonly expiresAt?: unknown;
}

export interface CreatedToken {
  /** The secret: shown to the user this once and never stored. */
  readonly secret: string;
  readonly token: TokenInfo;
}

export type OwnerTokenStatus = 'created' | 'existing' | 'revoked';

/** A token as the lists show it: with when it was last used (null: never, as far as svc knows). */
export type TokenListing = TokenInfo & { readonly lastUsedAt: string | null };

/** What a token id looks like: `tok_` and 12 hex digits. */
export const TOKEN_ID = /^tok_[0-9a-f]{12}$/;

/** The `bad_request` of an id that is not a token id. */
export function notTokenId(id: unknown): SvcError {
  return new SvcError('bad_request', `${JSON.stringify(id) ?? String(id)} is not a token id ("tok_" and 12 hex digits, as listed)`, {
    details: { field: 'id' },
  });
}

export class Tokens {
  readonly #store: StateStore;
  readonly #index: TokenIndex;
  readonly #workspaces: Workspaces;
  readonly #clock: Clock;
  /** Where uses are noted (the verifier's); without it, lists say no token was used. */
  readonly usage: TokenUsage;

  readonly #mayAct: (principal: Principal) => Promise<boolean>;

  /**
   * `mayAct` says whether a principal may still act in its workspace (an
   * account that was removed from it may not): no token is made for one
   * that may not, however its request was started (a device code approved
   * before the removal, say). Default: any.
   */
  constructor(
    store: StateStore,
    index: TokenIndex,
    workspaces: Workspaces,
    clock: Clock = systemClock,
    mayAct: (principal: Principal) => Promise<boolean> = async () => true,
  ) {
    this.#store = store;
    this.#index = index;
    this.#workspaces = workspaces;
    this.#clock = clock;
    this.#mayAct = mayAct;
    this.usage = new TokenUsage(store);
  }

  /** A new token of the creator's workspace, acting as the creator. */
  async create(input: CreateTokenInput, creator: Principal): Promise<CreatedToken> {
    const now = this.#clock();
    const name = checkTokenName(input.name);
    const expiresAt = checkTokenExpiry(input.expiresAt, now);
    await this.#workspaces.require(creator.workspace);
    if (!(await this.#mayAct(creator))) {
      throw new SvcError(
        'forbidden',
        `${creator.subject} may no longer act in workspace ${creator.workspace}, so no token is made for it.`,
      );
    }
    // The id is 48 bits of the hash; creating with cas 0 makes a (very unlikely) clash a retry, not an overwrite.
    for (let attempt = 0; attempt < 3; attempt++) {
      const { secret, id } = generateToken();
      const record: TokenRecord = {
        id,
        hash: hashToken(secret),
        workspace: creator.workspace,
        subject: creator.subject,
        name,
        createdBy: creator.subject,
        createdAt: isoAt(now),
        expiresAt,
        revokedAt: null,
      };
      if (await putJson(this.#store, tokenKey(record.workspace, id), record, { cas: 0 })) {
        await this.#index.remember(record);
        return { secret, token: tokenInfo(record) };
      }
    }
    throw new SvcError('internal', 'could not find a free token id in 3 attempts');
  }

  /** The workspace's live tokens, oldest first, without secrets or hashes. Expired ones are listed (until revoked) so that people see why they fail. */
  async list(viewer: Principal): Promise<TokenListing[]> {
    const entries = await this.#store.list(workspaceTokensPrefix(viewer.workspace));
    const lastUsed = await this.usage.lastUsed(viewer.workspace);
    return entries
      .map((entry) => storedJson(entry, parseTokenRecord))
      .filter((record) => record.revokedAt === null)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
      .map((record) => ({ ...tokenInfo(record), lastUsedAt: lastUsed.get(record.id) ?? null }));
  }

  /**
   * Revokes a token of the actor's workspace: any of them for an owner, only
   * their own (acting as them) for a member (`forbidden` otherwise). From the moment this resolves,
   * this process's verifier refuses it; other processes follow through their
   * watch. `not_found` when the workspace has no such live token.
   */
  async revoke(id: unknown, actor: Principal, role: Role = 'owner'): Promise<TokenInfo> {
    if (typeof id !== 'string' || !TOKEN_ID.test(id)) throw notTokenId(id);
    const key = tokenKey(actor.workspace, id);
    for (;;) {
      const entry = await getJson(this.#store, key, parseTokenRecord);
      if (entry === null || entry.value.revokedAt !== null) {
        throw new SvcError('not_found', `workspace ${JSON.stringify(actor.workspace)} has no token ${id}`, { details: { token: id } });
      }
      if (role !== 'owner' && entry.value.subject !== actor.subject) {
        throw new SvcError('forbidden', `${id} acts as someone else; a member revokes only their own tokens, an owner any.`, {
          details: { token: id },
        });
      }
      const revoked: TokenRecord = { ...entry.value, revokedAt: isoAt(this.#clock()) };
      // Before the write: should the store fail, the token is refused here anyway (fail closed).
      this.#index.forget(revoked.hash);
      if (await putJson(this.#store, key, revoked, { cas: entry.modifyIndex })) {
        await this.usage.forget(revoked.workspace, revoked.id);
        return tokenInfo(revoked);
      }
    }
  }

  /**
   * Registers the embedded owner token (`<data dir>/owner-token`) as a token
   * of `default` acting as the owner account. Idempotent: the same secret has
   * the same hash and id, so every start finds the one record. A revoked owner
   * token stays revoked (`revoked`): delete the file and restart to rotate it.
   */
  async registerOwnerToken(secret: string, owner: Account): Promise<{ token: TokenInfo; status: OwnerTokenStatus }> {
    if (!looksLikeToken(secret))
      throw new SvcError('config_invalid', 'the owner token is not an svc token ("svc_" and 40 letters or digits)');
    await this.#workspaces.require(DEFAULT_WORKSPACE_NAME);
    const hash = hashToken(secret);
    const record: TokenRecord = {
      id: tokenIdOf(hash),
      hash,
      workspace: DEFAULT_WORKSPACE_NAME,
      subject: owner.id,
      name: 'owner token',
      createdBy: 'svc',
      createdAt: isoAt(this.#clock()),
      expiresAt: null,
      revokedAt: null,
    };
    const key = tokenKey(record.workspace, record.id);
    for (;;) {
      if (await putJson(this.#store, key, record, { cas: 0 })) {
        await this.#index.remember(record);
        return { token: tokenInfo(record), status: 'created' };
      }
      const existing = await getJson(this.#store, key, parseTokenRecord);
      if (existing === null) continue; // deleted in between: create it again
      if (existing.value.hash !== hash) throw new SvcError('internal', `the owner token's id ${record.id} is taken by another token`);
      return { token: tokenInfo(existing.value), status: existing.value.revokedAt === null ? 'existing' : 'revoked' };
    }
  }
}
