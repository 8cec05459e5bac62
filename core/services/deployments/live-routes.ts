/**
 * The route each live workload's state calls for (live.ts): serving, or an
 * offline answer (paused, stopped, shutting down, not restored), swapped in
 * the route table in one synchronous step.
 */
import type { RouteTable } from '../../traffic/gateway/types.js';
import { unitKey } from '../../model/deployment-keys.js';
import { isServed, type LiveDeployment, type LiveWorkload } from './live.js';
import { appPausedError, deploymentStoppedError, shuttingDownError } from './offline.js';
import { hostTakenWarnings, routeEntryFor } from './route-entries.js';

export interface LiveRoutes {
  readonly routes: RouteTable;
  readonly baseDomain: string | null;
  /** True once svc stops: workloads that were serving answer `shutting_down`. */
  readonly closing: () => boolean;
}

/**
 * Puts the route a workload's state calls for in place of the one it had,
 * in one synchronous step: requests see the old route or the new one, never
 * none. Returns warnings about its host-based URL.
 */
export function installRoute(context: LiveRoutes, live: LiveDeployment, lw: LiveWorkload): string[] {
  const { routes } = context;
  // A workload that is no longer served (a redeploy made it a function) has no URL: its old route goes.
  if (!isServed(lw.workload)) {
    if (lw.routeUnit !== null) routes.removeUnit(lw.routeUnit);
    lw.routeUnit = null;
    return [];
  }
  const { ref } = live;
  const name = lw.workload.name;
  const offline = live.paused
    ? appPausedError(ref)
    : lw.status === 'stopped'
      ? deploymentStoppedError(ref, name)
      : context.closing()
        ? shuttingDownError(ref, name)
        : lw.unit === null
          ? (lw.failure ?? undefined)
          : undefined;
  const unit = lw.unit ?? unitKey(ref, name);
  const { entry, warning } = routeEntryFor(ref, lw.workload, context.baseDomain, unit, offline);
  if (lw.routeUnit !== null) routes.removeUnit(lw.routeUnit);
  const taken = routes.add([entry]);
  lw.routeUnit = unit;
  return [...(warning === null ? [] : [warning]), ...hostTakenWarnings(taken)];
}

/** Sets the workload's offline route; returns the unit that served it, to be stopped. */
export function takeDown(context: LiveRoutes, live: LiveDeployment, lw: LiveWorkload): string[] {
  const serving = lw.unit;
  lw.unit = null;
  installRoute(context, live, lw);
  return serving === null ? [] : [serving];
}

/** Removes the workload's route; returns the unit that served it, to be stopped. */
export function unroute(routes: RouteTable, lw: LiveWorkload): string[] {
  if (lw.routeUnit !== null) routes.removeUnit(lw.routeUnit);
  lw.routeUnit = null;
  const serving = lw.unit;
  lw.unit = null;
  return serving === null ? [] : [serving];
}
