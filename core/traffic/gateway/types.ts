/**
 * Gateway types. The gateway routes a workload's stable URL to one of its
 * healthy containers; it learns routes from deployments and containers from
 * the registry, and keeps both in memory so the request path does no I/O.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DeploymentRef } from '../../model/deployment-keys.js';
import type { SvcError } from '../../model/errors.js';
import type { Principal } from '../../model/principal.js';
import type { Workload } from '../../model/workload/types.js';

/** One routable workload of a deployment. */
export interface RouteEntry {
  readonly ref: DeploymentRef;
  readonly workload: Workload;
  /** Deployment unit key: the registry service that serves it. */
  readonly unit: string;
  /** Path prefix of the workload's URL, without the route: `/default/quickstart/greet`. */
  readonly prefix: string;
  /**
   * Host name of its host-based URL (`quickstart-greet.svc.example.com`), lower case, no port;
   * absent or null when no base domain is configured or the name makes no valid host.
   */
  readonly host?: string | null;
  /**
   * Set while the workload is down on purpose (its app paused, its deployment
   * stopped): the URL stays reserved, and requests that pass the access check get this error.
   */
  readonly offline?: SvcError;
}

/** A platform route served without Koa: says true when it took the request, false to leave it to Koa. */
export type RawRoute = (req: IncomingMessage, res: ServerResponse) => boolean;

/** What the gateway middleware records on `ctx.state` for later middleware and logs. */
export interface GatewayState {
  requestId: string;
  /** The parsed request URL; see request-url.ts. */
  url?: URL;
  route?: RouteEntry;
  principal?: Principal | null;
}

/**
 * What the services layer sees of the data plane (autoscaler, runs,
 * deployments): these types, through this face, never the modules themselves.
 */
export type { Admission, Slot, UnitSupervisor } from './admission.js';
export type { HostTaken, RouteTable } from './route-table.js';
export type { UpstreamPools } from './proxy.js';

/** A request to a workload URL sent with `Prefer: respond-async`: what svc sends for it later. */
export interface DeferredRequest {
  readonly method: string;
  /** `/path?query`, as the client sent it. */
  readonly target: string;
  /** The headers as the gateway forwards them (never the platform's token, nor the Prefer header), flat `[name, value, …]`. */
  readonly headers: readonly string[];
  /** The body, base64. */
  readonly body: string;
}

/** A workload's answer to a deferred request, as kept in the call's outcome. */
export interface StoredResponse {
  readonly status: number;
  /** Its headers, flat `[name, value, …]`, hop-by-hop ones left out. */
  readonly headers: readonly string[];
  /** Its body, base64. */
  readonly body: string;
}
