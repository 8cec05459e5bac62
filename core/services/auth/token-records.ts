/**
 * How API tokens are stored: one JSON record per token under
 * `tokens/<workspace>/<id>`, holding the SHA-256 hash of the secret, never the
 * secret. A revoked token keeps its record with `revokedAt` set (a tombstone),
 * so that re-registering the same secret (the owner token at every start)
 * cannot bring it back.
 */
import type { Principal } from '../../model/principal.js';
import { storedObject, storedString, storedStringOrNull } from '../../model/store/stored-fields.js';

export const TOKENS_PREFIX = 'tokens/';

export interface TokenRecord {
  /** `tok_` + the first 12 hex digits of the hash. */
  readonly id: string;
  /** SHA-256 of the secret, hex. */
  readonly hash: string;
  readonly workspace: string;
  /** Who the token acts as: the `subject` of its principal (an account id). */
  readonly subject: string;
  readonly name: string | null;
  /** The subject that created it (`svc` for the owner token). */
  readonly createdBy: string;
  /** ISO 8601, like every time below. */
  readonly createdAt: string;
  readonly expiresAt: string | null;
  readonly revokedAt: string | null;
}

/** What listing shows of a token: everything but the hash (and the secret, which nobody has). */
export interface TokenInfo {
  readonly id: string;
  readonly name: string | null;
  readonly workspace: string;
  readonly subject: string;
  readonly createdBy: string;
  readonly createdAt: string;
  readonly expiresAt: string | null;
}

export function tokenKey(workspace: string, id: string): string {
  return `${TOKENS_PREFIX}${workspace}/${id}`;
}

export function workspaceTokensPrefix(workspace: string): string {
  return `${TOKENS_PREFIX}${workspace}/`;
}

export function tokenInfo(record: TokenRecord): TokenInfo {
  const { id, name, workspace, subject, createdBy, createdAt, expiresAt } = record;
  return { id, name, workspace, subject, createdBy, createdAt, expiresAt };
}

export function tokenPrincipal(record: TokenRecord): Principal {
  return Object.freeze({ workspace: record.workspace, subject: record.subject, tokenId: record.id });
}

export function parseTokenRecord(value: unknown, key: string): TokenRecord {
  const record = storedObject(value, key);
  return {
    id: storedString(record, 'id', key),
    hash: storedString(record, 'hash', key),
    workspace: storedString(record, 'workspace', key),
    subject: storedString(record, 'subject', key),
    name: storedStringOrNull(record, 'name', key),
    createdBy: storedString(record, 'createdBy', key),
    createdAt: storedString(record, 'createdAt', key),
    expiresAt: storedStringOrNull(record, 'expiresAt', key),
    revokedAt: storedStringOrNull(record, 'revokedAt', key),
  };
}
