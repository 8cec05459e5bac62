/**
 * Nomad names of a deployment unit: the job ID (also the Consul service
 * name, so it must be an RFC 1123 label of at most 63 characters), the group,
 * the task and one dynamic port label per worker.
 */
import { createHash } from 'node:crypto';
import type { Stage } from '../core/deployments/keys.js';

export const TASK_NAME = 'runtime';

/** Our rule for job IDs and service names (the reference's "safe common rule"). */
export const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export interface UnitRef {
  readonly workspace: string;
  readonly app: string;
  readonly stage: Stage;
  readonly workload: string;
}

/**
 * `svc-<workspace>--<app>--<workload>`, then `--preview` (or `--run`) for
 * the other stages. svc names never hold `--`, so the parts cannot run into
 * each other (`svc-a-b-c-d` could be workspace `a-b` or app `b-c`). Past 63
 * characters the ID keeps its first 54 and ends in `-` + 8 hex digits of the
 * SHA-256 of the full one.
 */
export function jobId(ref: UnitRef): string {
  const base = `svc-${ref.workspace}--${ref.app}--${ref.workload}`.toLowerCase().replaceAll('_', '-');
  const full = ref.stage === 'deployed' ? base : `${base}--${ref.stage}`;
  if (full.length <= 63) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 8);
  return `${full.slice(0, 54).replace(/-+$/, '')}-${hash}`;
}

/** `w0`, `w1`…: one dynamic port per worker (`NOMAD_PORT_w0`…). */
export function workerPortLabels(workers: number): string[] {
  return Array.from({ length: workers }, (_, index) => `w${index}`);
}
