/**
 * Names for deployments. A deployment is one app in one workspace at one
 * stage: `preview` (from `svc serve`), `deployed` (from `svc deploy`) or `run`
 * (a remote run of a function, core/runs: never routed, never durable).
 * Each workload of it is a deployment unit with its own key; the registry
 * and the drivers know units only by that key.
 */
export type Stage = 'preview' | 'deployed' | 'run';

/** The workspace of the embedded platform until workspaces arrive with the control plane. */
export const DEFAULT_WORKSPACE = 'default';

export const stages: readonly Stage[] = ['preview', 'deployed', 'run'];

export interface DeploymentRef {
  readonly workspace: string;
  readonly app: string;
  readonly stage: Stage;
}

/** `default/quickstart/preview/greet`: unique per workspace, app, stage and workload. */
export function unitKey(ref: DeploymentRef, workload: string): string {
  return `${ref.workspace}/${ref.app}/${ref.stage}/${workload}`;
}

export function deploymentId(ref: DeploymentRef): string {
  return `${ref.workspace}/${ref.app}/${ref.stage}`;
}

/**
 * The unit key of one start of a workload: `default/quickstart/deployed@7/greet`.
 * A redeploy starts its containers under a new key while the old unit still
 * serves, and the route switches from one to the other. `serial` is unique in
 * this process only (units are not durable); version numbers are separate.
 */
export function servingUnitKey(ref: DeploymentRef, workload: string, serial: number): string {
  return `${ref.workspace}/${ref.app}/${ref.stage}@${serial}/${workload}`;
}
