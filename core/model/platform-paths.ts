/**
 * svc's own paths on every replica, outside any workspace (workspaces cannot
 * be named `_svc`). The Nomad job of svc itself checks them.
 */

/** Liveness: 200 while the process serves HTTP. */
export const HEALTH_PATH = '/_svc/health';
/** Readiness: 200 once this replica serves workload traffic (core/traffic/cluster/replica-gate.ts). */
export const READY_PATH = '/_svc/ready';
