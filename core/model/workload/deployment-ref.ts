/**
 * Which deployment a workload belongs to: one app in one workspace at one
 * stage. Pure names, shared by the deployments, the URLs and the Nomad jobs.
 */

/**
 * `preview` (from `svc serve`), `deployed` (from `svc deploy`) or `run` (a
 * remote run of a function, core/services/runs: never routed, never durable).
 */
export type Stage = 'preview' | 'deployed' | 'run';

export const stages: readonly Stage[] = ['preview', 'deployed', 'run'];

/** The workspace of the embedded platform, and the first one of a server. */
export const DEFAULT_WORKSPACE = 'default';

export interface DeploymentRef {
  readonly workspace: string;
  readonly app: string;
  readonly stage: Stage;
}
