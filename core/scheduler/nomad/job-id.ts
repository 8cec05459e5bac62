/**
 * Unit key → Nomad job ID (design 3.6).
 *
 * A unit key is `<workspace>/<app>/<stage>[@<serial>]/<workload>`
 * (core/deployments/keys.ts). Its job ID is
 *
 *     svc-<workspace>--<app>--<workload>[--<stage>][--s<serial>]
 *
 * lowercased with `_` → `-`; the stage is left out for `deployed` (as the
 * job compiler in jobs/names.ts does), the serial is appended when the key
 * has one (a redeploy starts its containers under a new key while the old
 * unit still serves, so the two must be two jobs). svc names never hold
 * `--`, so the parts cannot run into each other. Past 63 characters (the ID
 * is also an RFC 1123 label) it keeps its first 54 characters and ends in
 * `-` + 8 hex digits of the SHA-256 of the full ID. That is not reversible,
 * so the driver also stores the key itself in the job's `Meta.svc_unit`:
 * `GET /v1/jobs?prefix=svc-&meta=true` lists svc's jobs with their keys.
 */
import { createHash } from 'node:crypto';

export const UNIT_META_KEY = 'svc_unit';

export interface ParsedUnitKey {
  readonly workspace: string;
  readonly app: string;
  readonly stage: string;
  readonly serial: number | undefined;
  readonly workload: string;
}

export function parseUnitKey(key: string): ParsedUnitKey | undefined {
  const parts = key.split('/');
  if (parts.length !== 4 || parts.some((p) => p === '')) return undefined;
  const [workspace, app, stageAndSerial, workload] = parts as [string, string, string, string];
  const m = /^([a-z]+)(?:@(\d+))?$/.exec(stageAndSerial);
  if (!m) return undefined;
  return { workspace, app, stage: m[1]!, serial: m[2] === undefined ? undefined : Number(m[2]), workload };
}

function clean(part: string): string {
  return part.toLowerCase().replaceAll('_', '-').replace(/[^a-z0-9-]/g, '-');
}

export function nomadJobId(key: string): string {
  const parsed = parseUnitKey(key);
  let full: string;
  if (parsed) {
    full = `svc-${clean(parsed.workspace)}--${clean(parsed.app)}--${clean(parsed.workload)}`;
    if (parsed.stage !== 'deployed') full += `--${clean(parsed.stage)}`;
    if (parsed.serial !== undefined) full += `--s${parsed.serial}`;
  } else {
    // Not a unit key of core/deployments (tests, tools): still a valid, stable ID.
    full = `svc-${clean(key.replaceAll('/', '--'))}`;
  }
  if (full.length <= 63) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 8);
  return `${full.slice(0, 54).replace(/-+$/, '')}-${hash}`;
}
