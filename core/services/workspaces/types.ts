/** Workspaces: the unit of isolation. Every app, token and bundle belongs to exactly one. */

export const PLANS = ['free', 'team', 'business'] as const;
export type Plan = (typeof PLANS)[number];

export interface Workspace {
  /** Follows the name rule (`names.ts`). */
  readonly name: string;
  /** Custom domains need `team` or `business`. */
  readonly plan: Plan;
  /** ISO 8601. */
  readonly createdAt: string;
}

/** The workspace a fresh install starts with, and where the owner token lives. */
export const DEFAULT_WORKSPACE_NAME = 'default';
