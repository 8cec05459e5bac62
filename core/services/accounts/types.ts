/** Accounts: the people (or robots) who sign in to the dashboard and approve `svc login`. */
import type { Principal } from '../../model/principal.js';

export const ROLES = ['owner', 'member'] as const;
/** An owner may change workspace settings such as the plan; a member may use the workspace. */
export type Role = (typeof ROLES)[number];

export interface Account {
  /** `acc_` + 16 hex digits; the `subject` of the tokens it creates. */
  readonly id: string;
  readonly name: string;
  /** Its role in a workspace that `roles` does not name (the first owner's everywhere it is). */
  readonly role: Role;
  /** Names of the workspaces the account may use. */
  readonly workspaces: readonly string[];
  /** Its role per workspace, where that differs from `role` (an invited member, a workspace it created). */
  readonly roles?: Readonly<Record<string, Role>>;
  /** The account that invited it; absent for the first owner. */
  readonly invitedBy?: string;
  /** When it first signed in; null while its invitation is open. Absent: an account from before invitations (signed in). */
  readonly joinedAt?: string | null;
  /** ISO 8601. */
  readonly createdAt: string;
}

/** The account's role in `workspace` (it may use it: the caller checked). */
export function roleIn(account: Account, workspace: string): Role {
  return account.roles?.[workspace] ?? account.role;
}

/** Who asks for an operation: the authenticated principal and the role of its account. */
export interface Actor {
  readonly principal: Principal;
  readonly role: Role;
}
