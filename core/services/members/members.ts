/**
 * Who may use a workspace, and how people get in. Any account creates a
 * workspace and owns it; an owner invites a person by name with a role
 * (`owner` or `member`): the invitation is a new account and a one-time
 * sign-in link for it, valid for 7 days. An owner removes a member: the
 * account loses the workspace, its sessions end, and its tokens there are
 * revoked. The last owner of a workspace cannot be removed. The API, the CLI
 * and the dashboard all call this one service.
 */
import { Accounts } from '../accounts/accounts.js';
import type { Sessions } from '../accounts/sessions.js';
import type { IssuedSignIn, SignInLinks } from '../accounts/sign-in.js';
import { ROLES, roleIn, type Account, type Role } from '../accounts/types.js';
import { isoAt, systemClock, type Clock } from '../../model/clock.js';
import type { CreatedToken, Tokens } from '../auth/token-service.js';
import { SvcError } from '../../model/errors.js';
import type { Principal } from '../../model/principal.js';
import { checkName } from '../../model/names.js';
import type { Workspaces } from '../workspaces/workspaces.js';
import type { Workspace } from '../workspaces/types.js';

/** How long an invitation's sign-in link works. */
export const INVITATION_LIFETIME_MS = 7 * 24 * 60 * 60_000;
const NAME_MAX = 100;

export interface Member {
  readonly id: string;
  readonly name: string;
  readonly role: Role;
  /** False while the invitation is open (the person never signed in). */
  readonly joined: boolean;
  readonly invitedBy: string | null;
  readonly createdAt: string;
}

export interface Invitation {
  readonly member: Member;
  /** Goes into the link `<server>/login#<secret>`; shown once. */
  readonly signIn: IssuedSignIn;
}

export class Members {
  readonly #workspaces: Workspaces;
  readonly #accounts: Accounts;
  readonly #signIn: SignInLinks;
  readonly #sessions: Sessions;
  readonly #tokens: Tokens;
  readonly #clock: Clock;
  readonly #queues = new Map<string, Promise<void>>();

  constructor(
    services: { workspaces: Workspaces; accounts: Accounts; signIn: SignInLinks; sessions: Sessions; tokens: Tokens },
    clock: Clock = systemClock,
  ) {
    this.#workspaces = services.workspaces;
    this.#accounts = services.accounts;
    this.#signIn = services.signIn;
    this.#sessions = services.sessions;
    this.#tokens = services.tokens;
    this.#clock = clock;
  }

  /** The workspaces the principal's account may use, with its role in each; `forbidden` for a principal that is no account of its workspace. */
  async workspacesOf(principal: Principal): Promise<{ workspace: Workspace; role: Role }[]> {
    const account = await this.#account(principal);
    const found = await Promise.all(
      account.workspaces.map(async (name) => ({ workspace: await this.#workspaces.get(name), role: roleIn(account, name) })),
    );
    return found.filter((entry): entry is { workspace: Workspace; role: Role } => entry.workspace !== null);
  }

  /**
   * A new token of the principal's account in another of its workspaces
   * (`svc workspace use`); `not_found` when the account has no workspace of
   * that name, another account's included.
   */
  async tokenIn(name: unknown, principal: Principal): Promise<CreatedToken> {
    const account = await this.#account(principal);
    const workspace = checkName('workspace', name);
    if (!account.workspaces.includes(workspace))
      throw new SvcError('not_found', `you have no workspace ${workspace}.`, { hint: 'GET /api/v1/workspaces lists yours.' });
    return this.#tokens.create({ name: `svc workspace use (${roleIn(account, workspace)})` }, { workspace, subject: account.id });
  }

  /** A new workspace, owned by the account that creates it. `name_invalid`, `conflict` when the name is taken. */
  async createWorkspace(name: unknown, creator: Principal): Promise<Workspace> {
    const account = await this.#account(creator);
    const workspace = await this.#workspaces.create(name);
    await this.#accounts.update(account.id, (current) => ({
      ...current,
      workspaces: [...current.workspaces, workspace.name],
      roles: { ...current.roles, [workspace.name]: 'owner' },
    }));
    return workspace;
  }

  /** Everyone who may use the caller's workspace, by name: members of that workspace only. */
  async list(viewer: Principal): Promise<Member[]> {
    await this.#account(viewer);
    return (await this.#accounts.membersOf(viewer.workspace)).map((account) => memberOf(account, viewer.workspace));
  }

  /** Invites a person into the caller's workspace (owners only): a new account and its one-time link. */
  async invite(input: { name?: unknown; role?: unknown }, actor: Principal): Promise<Invitation> {
    const inviter = await this.#owner(actor, 'invite people');
    const name = checkPersonName(input.name);
    // Left out means member; given, it must be a role (null is not "left out").
    const role = checkRole(input.role === undefined ? 'member' : input.role);
    const account: Account = {
      id: Accounts.newId(),
      name,
      role,
      workspaces: [actor.workspace],
      roles: { [actor.workspace]: role },
      invitedBy: inviter.id,
      joinedAt: null,
      createdAt: isoAt(this.#clock()),
    };
    await this.#accounts.create(account);
    const signIn = await this.#signIn.issue(account.id, INVITATION_LIFETIME_MS);
    return { member: memberOf(account, actor.workspace), signIn };
  }

  /**
   * Removes a member from the caller's workspace (owners only): its sessions
   * end and its tokens there are revoked at once. `not_found` for someone who
   * is not a member (of this workspace: another's are invisible), `conflict`
   * for the last owner.
   */
  async remove(accountId: unknown, actor: Principal): Promise<Member> {
    return this.#serial(actor.workspace, async () => {
      await this.#owner(actor, 'remove people');
      const workspace = actor.workspace;
      const members = await this.#accounts.membersOf(workspace);
      const target = members.find((account) => account.id === accountId);
      if (target === undefined) throw noSuchMember(workspace, accountId);
      // Owners who signed in: an invitation nobody used is no owner to leave the workspace to.
      const owners = members.filter((account) => roleIn(account, workspace) === 'owner' && account.joinedAt !== null);
      if (owners.length === 1 && owners[0]!.id === target.id) {
        throw new SvcError(
          'conflict',
          `${target.name} is the last owner of workspace ${workspace} who has signed in; invite another owner, and let them sign in, first.`,
          { details: { account: target.id } },
        );
      }
      // Tokens and sessions first, the membership last: a failure half-way can be retried, and never leaves a token that works.
      for (const token of await this.#tokens.list(actor)) {
        if (token.subject === target.id)
          await this.#tokens.revoke(token.id, actor).catch((error: unknown) => {
            if (!(error instanceof SvcError && error.code === 'not_found')) throw error; // revoked meanwhile
          });
      }
      await this.#sessions.endAllOf(target.id, workspace);
      await this.#accounts.update(target.id, (current) => {
        const { [workspace]: _gone, ...roles } = current.roles ?? {};
        return { ...current, workspaces: current.workspaces.filter((name) => name !== workspace), roles };
      });
      return memberOf(target, workspace);
    });
  }

  /**
   * Runs membership changes of one workspace one at a time, so that two
   * owners removing each other at once cannot leave it without one. One
   * process does them: followers forward the API and the dashboard to the leader.
   */
  #serial<T>(workspace: string, change: () => Promise<T>): Promise<T> {
    const previous = this.#queues.get(workspace) ?? Promise.resolve();
    const next = previous.then(change, change);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.#queues.set(workspace, settled);
    void settled.then(() => {
      if (this.#queues.get(workspace) === settled) this.#queues.delete(workspace);
    });
    return next;
  }

  /** Marks an invited account joined, on its first sign-in. */
  async joined(accountId: string): Promise<void> {
    await this.#accounts.update(accountId, (account) =>
      account.joinedAt === null ? { ...account, joinedAt: isoAt(this.#clock()) } : account,
    );
  }

  async #account(principal: Principal): Promise<Account> {
    const account = await this.#accounts.get(principal.subject);
    if (account === null || !account.workspaces.includes(principal.workspace)) {
      throw new SvcError('forbidden', `${principal.subject} is no account of workspace ${principal.workspace}.`, {
        hint: 'Use a token of a person: one made by svc login or the dashboard.',
      });
    }
    return account;
  }

  async #owner(principal: Principal, what: string): Promise<Account> {
    const account = await this.#account(principal);
    if (roleIn(account, principal.workspace) !== 'owner') {
      throw new SvcError('forbidden', `only an owner of workspace ${principal.workspace} may ${what}; ${account.name} is a member.`);
    }
    return account;
  }
}

function memberOf(account: Account, workspace: string): Member {
  return {
    id: account.id,
    name: account.name,
    role: roleIn(account, workspace),
    joined: account.joinedAt !== null,
    invitedBy: account.invitedBy ?? null,
    createdAt: account.createdAt,
  };
}

function checkPersonName(name: unknown): string {
  if (typeof name !== 'string' || name.trim() === '')
    throw new SvcError('bad_request', 'give the person\'s name (1 to 100 characters), e.g. "Ada Lovelace".', {
      details: { field: 'name' },
    });
  const trimmed = name.trim();
  // eslint-disable-next-line no-control-regex
  if (trimmed.length > NAME_MAX || /[\u0000-\u001f\u007f]/.test(trimmed)) {
    throw new SvcError('bad_request', `a name is 1 to ${NAME_MAX} characters without control characters.`, { details: { field: 'name' } });
  }
  return trimmed;
}

function checkRole(role: unknown): Role {
  if (typeof role === 'string' && (ROLES as readonly string[]).includes(role)) return role as Role;
  throw new SvcError('bad_request', `the role ${JSON.stringify(role)} is neither owner nor member.`, { details: { field: 'role' } });
}

/** The `not_found` of an account that is no member of the workspace (another workspace's included). */
export function noSuchMember(workspace: string, accountId: unknown): SvcError {
  return new SvcError('not_found', `workspace ${workspace} has no member ${JSON.stringify(accountId)}.`, {
    details: { account: accountId },
  });
}
