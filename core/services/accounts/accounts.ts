/**
 * Account records, under `accounts/<id>`. Kept minimal: the owner account a
 * fresh install creates, read back by id. Which account is the first owner is
 * claimed once under `bootstrap/owner-account`, so two servers starting
 * together (sharing a Consul store) agree on one.
 */
import { randomBytes } from 'node:crypto';
import { isoAt, systemClock, type Clock } from '../../model/clock.js';
import { storedJson, storedObject, storedOneOf, storedString } from '../../model/store/stored-fields.js';
import { SvcError } from '../../model/errors.js';
import { getJson, putJson } from '../../model/store/json.js';
import type { StateStore } from '../../model/store/types.js';
import { DEFAULT_WORKSPACE_NAME } from '../workspaces/types.js';
import { ROLES, type Account, type Role } from './types.js';

const PREFIX = 'accounts/';
export const OWNER_CLAIM_KEY = 'bootstrap/owner-account';

export function accountKey(id: string): string {
  return `${PREFIX}${id}`;
}

export class Accounts {
  readonly #store: StateStore;
  readonly #clock: Clock;

  constructor(store: StateStore, clock: Clock = systemClock) {
    this.#store = store;
    this.#clock = clock;
  }

  async get(id: string): Promise<Account | null> {
    if (!/^acc_[0-9a-f]{16}$/.test(id)) return null; // never build a key from junk
    return (await getJson(this.#store, accountKey(id), parseAccount))?.value ?? null;
  }

  /** The accounts that may use `workspace`, by name. */
  async membersOf(workspace: string): Promise<Account[]> {
    const accounts = (await this.#store.list(PREFIX)).map((entry) => storedJson(entry, parseAccount));
    return accounts
      .filter((account) => account.workspaces.includes(workspace))
      .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  }

  /** Stores a new account (an invitation's); `conflict` if the id is taken. */
  async create(account: Account): Promise<Account> {
    if (!(await putJson(this.#store, accountKey(account.id), account, { cas: 0 }))) {
      throw new SvcError('conflict', `the account ${account.id} exists already`, { details: { account: account.id } });
    }
    return account;
  }

  /**
   * Changes an account with compare-and-set, retried on a concurrent change:
   * `change` gets the stored account and returns the new one (or the same to
   * change nothing). `not_found` when there is no such account.
   */
  async update(id: string, change: (account: Account) => Account): Promise<Account> {
    for (;;) {
      const entry = /^acc_[0-9a-f]{16}$/.test(id) ? await getJson(this.#store, accountKey(id), parseAccount) : null;
      if (entry === null) throw new SvcError('not_found', `there is no account ${JSON.stringify(id)}`, { details: { account: id } });
      const changed = change(entry.value);
      if (changed === entry.value) return changed;
      if (await putJson(this.#store, accountKey(id), changed, { cas: entry.modifyIndex })) return changed;
    }
  }

  /**
   * The server's operator: the instance-wide admin who sets workspaces'
   * plans. It is the first owner account (claimed once, never moved), so a
   * workspace owner, who may create workspaces, can never make itself one.
   */
  async isOperator(id: string): Promise<boolean> {
    const claim = await this.#store.get(OWNER_CLAIM_KEY);
    return claim !== null && JSON.parse(claim.value.toString('utf8')) === id;
  }

  /** A fresh account id. */
  static newId(): string {
    return `acc_${randomBytes(8).toString('hex')}`;
  }

  /** The account, or `not_found`. */
  async require(id: string): Promise<Account> {
    const account = await this.get(id);
    if (account === null) throw new SvcError('not_found', `there is no account ${JSON.stringify(id)}`, { details: { account: id } });
    return account;
  }

  /**
   * The first owner account (name `owner`, workspace `default`): created on
   * first start, the same one afterwards. A crash between the claim and the
   * account record is repaired on the next call.
   */
  async ensureOwner(): Promise<{ account: Account; created: boolean }> {
    const candidate = `acc_${randomBytes(8).toString('hex')}`;
    await putJson(this.#store, OWNER_CLAIM_KEY, candidate, { cas: 0 });
    const claim = await getJson(this.#store, OWNER_CLAIM_KEY, (value, key) => {
      if (typeof value !== 'string')
        throw new SvcError('state_corrupt', `the state record ${JSON.stringify(key)} is not an account id`, { details: { key } });
      return value;
    });
    const id = claim!.value; // written above or before; never deleted
    const fresh: Account = { id, name: 'owner', role: 'owner', workspaces: [DEFAULT_WORKSPACE_NAME], createdAt: isoAt(this.#clock()) };
    if (await putJson(this.#store, accountKey(id), fresh, { cas: 0 })) return { account: fresh, created: true };
    return { account: await this.require(id), created: false };
  }
}

function parseAccount(value: unknown, key: string): Account {
  const record = storedObject(value, key);
  const workspaces = record.workspaces;
  if (!Array.isArray(workspaces) || !workspaces.every((w) => typeof w === 'string')) {
    throw new SvcError('state_corrupt', `the state record ${JSON.stringify(key)} has no list of workspace names`, { details: { key } });
  }
  const roles = record.roles ?? {};
  if (
    typeof roles !== 'object' ||
    roles === null ||
    Array.isArray(roles) ||
    !Object.values(roles).every((role) => (ROLES as readonly unknown[]).includes(role))
  ) {
    throw new SvcError('state_corrupt', `the state record ${JSON.stringify(key)} has roles that are not owner or member`, {
      details: { key, field: 'roles' },
    });
  }
  const joinedAt = record.joinedAt;
  return {
    id: storedString(record, 'id', key),
    name: storedString(record, 'name', key),
    role: storedOneOf(record, 'role', key, ROLES),
    workspaces,
    ...(Object.keys(roles).length === 0 ? {} : { roles: roles as Record<string, Role> }),
    ...(typeof record.invitedBy === 'string' ? { invitedBy: record.invitedBy } : {}),
    ...(joinedAt === null || typeof joinedAt === 'string' ? { joinedAt } : {}),
    createdAt: storedString(record, 'createdAt', key),
  };
}
