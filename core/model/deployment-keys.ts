/**
 * Keys of deployments and their units. A deployment is one app in one
 * workspace at one stage (core/model/workload/deployment-ref.ts). Each workload of
 * it is a deployment unit with its own key; the registry and the drivers
 * know units only by that key.
 */
import type { DeploymentRef, Stage } from './workload/deployment-ref.js';

export { DEFAULT_WORKSPACE, stages, type DeploymentRef, type Stage } from './workload/deployment-ref.js';

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

/** The parts of a unit key (`unitKey` or `servingUnitKey`). */
export interface UnitRef extends DeploymentRef {
  readonly workload: string;
  /** The serial of a serving unit key (`…/deployed@<serial>/…`); undefined for a plain unit key. */
  readonly serial?: number | undefined;
}

/** The parts of a key `unitKey` or `servingUnitKey` made; undefined for anything else. */
export function parseUnitKey(key: string): UnitRef | undefined {
  const parts = key.split('/');
  if (parts.length !== 4 || parts.some((p) => p === '')) return undefined;
  const [workspace, app, stageAndSerial, workload] = parts as [string, string, string, string];
  const m = /^(deployed|preview|run)(?:@(\d+))?$/.exec(stageAndSerial);
  if (!m) return undefined;
  return { workspace, app, stage: m[1] as Stage, serial: m[2] === undefined ? undefined : Number(m[2]), workload };
}
