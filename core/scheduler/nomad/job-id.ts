/**
 * Unit key → Nomad job ID (design 3.6): `jobs/names.ts` `unitJobId`, the one
 * rule the job compiler (job ID, Consul service name), this driver and the
 * Consul registry share:
 *
 *     svc-<workspace>--<app>--<workload>[--<stage>][--s<serial>]
 *
 * Past 63 characters the ID ends in a hash and cannot be read back, so the
 * driver also stores the key itself in the job's `Meta.svc_unit`:
 * `GET /v1/jobs?prefix=svc-&meta=true` lists svc's jobs with their keys.
 */
export { parseUnitKey, unitJobId as nomadJobId } from '../../../jobs/names.js';

export const UNIT_META_KEY = 'svc_unit';
/** The installation a job belongs to (one svc's state: its Consul KV prefix or data dir), so that svcs sharing a namespace never purge each other's jobs. */
export const INSTALL_META_KEY = 'svc_install';
