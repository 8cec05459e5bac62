import Koa from 'koa';
import { SvcError } from '../errors.js';
import type { PluginHost } from '../plugin/host.js';
import { errorMiddleware, type ErrorReporter } from './error-middleware.js';
import type { Admission } from './admission.js';
import type { UpstreamPools } from './proxy.js';
import { requestIdMiddleware } from './request-id.js';
import { hostMiddleware } from './request-url.js';
import type { RouteTable } from './route-table.js';
import type { GatewayState } from './types.js';
import { workloadMiddleware } from './workload-middleware.js';

export { DEFAULT_MAX_BODY_BYTES } from './body-limit.js';

export interface GatewayOptions {
  readonly routes: RouteTable;
  readonly upstreams: UpstreamPools;
  readonly admission: Admission;
  readonly plugins: PluginHost;
  readonly report: ErrorReporter;
  /** Platform routes (health, later the control-plane API), tried before workloads. */
  readonly platformRoutes?: Koa.Middleware;
  /** Largest request body forwarded to a container; default `DEFAULT_MAX_BODY_BYTES` (32 MiB). */
  readonly maxBodyBytes?: number;
}

/**
 * The gateway as a Koa app: errors → request id → Host check → platform
 * routes → workloads. Anything no route claims is a 404 in the one error shape.
 */
export function createGateway(options: GatewayOptions): Koa<GatewayState> {
  const app = new Koa<GatewayState>();
  app.proxy = false;
  // Errors are answered by errorMiddleware; Koa's own handler would only print them again.
  app.silent = true;
  app.use(errorMiddleware(options.report));
  app.use(requestIdMiddleware());
  app.use(hostMiddleware());
  if (options.platformRoutes) app.use(options.platformRoutes);
  const { routes, upstreams, admission, plugins, maxBodyBytes } = options;
  app.use(workloadMiddleware({ routes, upstreams, admission, plugins, maxBodyBytes }));
  app.use(async (ctx) => {
    throw new SvcError('not_found', `nothing answers at ${ctx.path}.`, {
      hint: 'Workload URLs look like /<workspace>/<app>/<workload>/<route>; svc serve and svc deploy print them.',
    });
  });
  return app;
}
