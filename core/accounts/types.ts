/** Accounts: the people (or robots) who sign in to the dashboard and approve `svc login`. */
import type { Principal } from '../plugin/types.js';

export const ROLES = ['owner', 'member'] as const;
/** An owner may change workspace settings such as the plan; a member may use the workspace. */
export type Role = (typeof ROLES)[number];

export interface Account {
  /** `acc_` + 16 hex digits; the `subject` of the tokens it creates. */
  readonly id: string;
  readonly name: string;
  readonly role: Role;
  /** Names of the workspaces the account may use. */
  readonly workspaces: readonly string[];
  /** ISO 8601. */
  readonly createdAt: string;
}

/** Who asks for an operation: the authenticated principal and the role of its account. */
export interface Actor {
  readonly principal: Principal;
  readonly role: Role;
}
