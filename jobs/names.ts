/**
 * Nomad names of a deployment unit: the job ID (also the Consul service
 * name, so it must be an RFC 1123 label of at most 63 characters), the group,
 * the task and one dynamic port label per worker.
 */
import { createHash } from 'node:crypto';
import type { Stage } from '../core/model/workload/deployment-ref.js';

/** The installation a job belongs to (one svc's state: its Consul KV prefix or data dir), so that svcs sharing a namespace never purge each other's jobs. */
export const INSTALL_META_KEY = 'svc_install';
export const TASK_NAME = 'runtime';

/** Our rule for job IDs and service names: an RFC 1123 label, which both Nomad job IDs and Consul service names (DNS) accept. */
export const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** What a job is named after: one workload of one deployment (one unit key's parts). */
export interface JobNameParts {
  readonly workspace: string;
  readonly app: string;
  readonly stage: Stage;
  readonly workload: string;
  /**
   * The serial of a serving unit key (`…/deployed@<serial>/…`): a redeploy
   * starts its containers under a new key while the old one still serves,
   * so the two must be two jobs and two Consul services.
   */
  readonly serial?: number | undefined;
}

/**
 * `svc-<workspace>--<app>--<workload>`, then `--preview` (or `--run`) for
 * the other stages and `--s<serial>` for a serving unit. svc names never
 * hold `--`, so the parts cannot run into each other (`svc-a-b-c-d` could be
 * workspace `a-b` or app `b-c`). Past 63 characters the ID keeps its first
 * 54 and ends in `-` + 8 hex digits of the SHA-256 of the full one.
 */
export function jobId(ref: JobNameParts): string {
  let full = `svc-${clean(ref.workspace)}--${clean(ref.app)}--${clean(ref.workload)}`;
  if (ref.stage !== 'deployed') full += `--${ref.stage}`;
  if (ref.serial !== undefined) full += `--s${ref.serial}`;
  return fitLabel(full);
}

/** A valid, stable job ID for a name that is not a unit's (tests, tools): `svc-` and the name, `/` as `--`. */
export function otherJobId(name: string): string {
  return fitLabel(`svc-${clean(name.replaceAll('/', '--'))}`);
}

function clean(part: string): string {
  return part
    .toLowerCase()
    .replaceAll('_', '-')
    .replace(/[^a-z0-9-]/g, '-');
}

function fitLabel(full: string): string {
  if (full.length <= 63) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 8);
  return `${full.slice(0, 54).replace(/-+$/, '')}-${hash}`;
}

/**
 * `svc-<workspace>--<volume>`: the Nomad volume of a svc volume (both are DNS labels without `--`, so no
 * two svc volumes share one): a host volume svc registers on the nodes that see the volume's folder, or
 * a CSI volume svc creates with the operator's plugin.
 */
export function nomadVolumeName(workspace: string, volume: string): string {
  return `svc-${workspace}--${volume}`;
}

/**
 * `svc--volume--<workspace>--<volume>` (fitted to 63 characters): the job of a CSI volume's keeper. A
 * unit's job starts `svc-<workspace>` and a workspace is never empty, so `svc--` is never a unit's.
 */
export function keeperJobId(workspace: string, volume: string): string {
  return fitLabel(`svc--volume--${workspace}--${volume}`);
}

/** `w0`, `w1`…: one dynamic port per worker (`NOMAD_PORT_w0`…). */
export function workerPortLabels(workers: number): string[] {
  return Array.from({ length: workers }, (_, index) => `w${index}`);
}
