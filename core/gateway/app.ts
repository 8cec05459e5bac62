import Koa from 'koa';
import type { PluginHost } from '../plugin/host.js';
import { errorMiddleware, type ErrorReporter } from './error-middleware.js';
import type { UpstreamPools } from './proxy.js';
import { requestIdMiddleware } from './request-id.js';
import type { RouteTable } from './route-table.js';
import type { GatewayState } from './types.js';
import { workloadMiddleware } from './workload-middleware.js';
import { SvcError } from '../errors.js';

export interface GatewayOptions {
  readonly routes: RouteTable;
  readonly upstreams: UpstreamPools;
  readonly plugins: PluginHost;
  readonly report: ErrorReporter;
  /** Platform routes (health, later the control-plane API), tried before workloads. */
  readonly platformRoutes?: Koa.Middleware;
}

/**
 * The gateway as a Koa app: errors → request id → platform routes →
 * workloads. Anything no route claims is a 404 in the one error shape.
 */
export function createGateway(options: GatewayOptions): Koa<GatewayState> {
  const app = new Koa<GatewayState>();
  app.proxy = false;
  // Errors are answered by errorMiddleware; Koa's own handler would only print them again.
  app.silent = true;
  app.use(errorMiddleware(options.report));
  app.use(requestIdMiddleware());
  if (options.platformRoutes) app.use(options.platformRoutes);
  app.use(workloadMiddleware({ routes: options.routes, upstreams: options.upstreams, plugins: options.plugins }));
  app.use(async (ctx) => {
    throw new SvcError('not_found', `nothing answers at ${ctx.path}.`, {
      hint: 'Workload URLs look like /<workspace>/<app>/<workload>/<route>; svc serve and svc deploy print them.',
    });
  });
  return app;
}
