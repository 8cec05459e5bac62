/**
 * Unit key → Nomad job ID: the one rule the job compiler (job ID, Consul
 * service name), this driver and the Consul registry share (`jobs/names.ts`):
 *
 *     svc-<workspace>--<app>--<workload>[--<stage>][--s<serial>]
 *
 * Past 63 characters the ID ends in a hash and cannot be read back, so the
 * driver also stores the key itself in the job's `Meta.svc_unit`:
 * `GET /v1/jobs?prefix=svc-&meta=true` lists svc's jobs with their keys.
 */
import { jobId, otherJobId } from '../../jobs/names.js';
import { parseUnitKey } from './deployment-keys.js';

/** The job ID (and Consul service name) of a unit key; any other key (tests, tools) still gets a valid, stable ID. */
export function nomadJobId(key: string): string {
  const ref = parseUnitKey(key);
  return ref ? jobId(ref) : otherJobId(key);
}

export const UNIT_META_KEY = 'svc_unit';
