import type { RequestListener } from 'node:http';
import Koa from 'koa';
import type { PlatformMetrics } from '../../infra/metrics/platform-metrics.js';
import type { PluginHost } from '../../infra/plugin/host.js';
import { checkAccess } from './access.js';
import type { Admission } from './admission.js';
import { checkContentLength, DEFAULT_MAX_BODY_BYTES } from './body-limit.js';
import { errorMiddleware } from './error-middleware.js';
import { nothingAnswers } from './nothing-answers.js';
import type { UpstreamPools } from './proxy.js';
import { requestIdMiddleware } from './request-id.js';
import { hostMiddleware, requestUrl } from './request-url.js';
import type { ErrorReporter } from './respond-error.js';
import type { RouteTable } from './route-table.js';
import type { GatewayState, RawRoute } from './types.js';
import type { Deferral } from './deferred.js';
import { createWorkloadHandler } from './workload-handler.js';
import { skipWireBytes } from './wire-bytes.js';

export { DEFAULT_MAX_BODY_BYTES } from './body-limit.js';

export interface GatewayOptions {
  readonly routes: RouteTable;
  readonly upstreams: UpstreamPools;
  readonly admission: Admission;
  readonly plugins: PluginHost;
  readonly report: ErrorReporter;
  /** Platform routes (health, the control-plane API and its pages), tried for any URL no workload claims. */
  readonly platformRoutes?: Koa.Middleware;
  /** A platform route served before Koa, on the hot path of its own (remote calls: core/http/api/call-route.ts). */
  readonly rawPlatformRoute?: RawRoute;
  /** Largest request body forwarded to a container; default `DEFAULT_MAX_BODY_BYTES` (32 MiB). */
  readonly maxBodyBytes?: number;
  /** Since when the routes and instances are what svc last knew (Consul does not answer); null while current. */
  readonly staleSince?: () => Date | null;
  /** Believe the proxy in front's X-Forwarded-* (client-origin.ts): Koa's `ctx.secure` (Secure cookies) and `ctx.ip` read them too. */
  readonly trustProxy?: boolean;
  /** Counts requests to workload URLs (`/metrics`). */
  readonly metrics?: PlatformMetrics;
  /** Takes `Prefer: respond-async` on workload URLs (deferred.ts). */
  readonly deferral?: Deferral;
}

export interface Gateway {
  /** The request listener of the gateway's HTTP server. */
  readonly handleRequest: RequestListener;
}

/**
 * The gateway: workload URLs take the raw path (workload-handler.ts: no
 * framework per request), and so does a remote call (`rawPlatformRoute`);
 * every other URL goes to a Koa app — errors → request id → Host check →
 * platform routes → the answer for unknown URLs. All answer errors through
 * the one writer (respond-error.ts).
 */
export function createGateway(options: GatewayOptions): Gateway {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const app = new Koa<GatewayState>();
  app.proxy = options.trustProxy ?? false;
  // Behind one trusted proxy the client is the address it saw: the last X-Forwarded-For entry, not one a client wrote.
  app.maxIpsCount = 1;
  // Errors are answered by errorMiddleware; Koa's own handler would only print them again.
  app.silent = true;
  app.use(errorMiddleware(options.report));
  app.use(requestIdMiddleware());
  app.use(hostMiddleware());
  if (options.platformRoutes) app.use(options.platformRoutes);
  app.use(async (ctx) => {
    // An unknown URL is judged like a workload's, in the same order: body size, then access (so that
    // nobody can probe which apps exist without a token), and only then "not found".
    checkContentLength(ctx.req.headers['content-length'], ctx.req, ctx.res, maxBodyBytes);
    await checkAccess({ plugins: options.plugins, entry: undefined, headers: ctx.headers, url: requestUrl(ctx), transport: 'http' });
    throw nothingAnswers(ctx.path);
  });
  const { routes, upstreams, admission, plugins, report, staleSince, rawPlatformRoute } = options;
  const koa = app.callback();
  // Whatever no workload answers (the API, the raw call route, the dashboard, unknown URLs) moves the
  // connection's byte marks past itself when it ends: the next workload request on it is billed only for its own.
  // A body nobody read is read by Node after the answer (to reuse the connection): its end moves them too.
  const fallback: RequestListener = (req, res) => {
    const socket = req.socket;
    const skip = () => skipWireBytes(socket);
    res.once('close', skip);
    req.once('end', skip);
    if (rawPlatformRoute === undefined || !rawPlatformRoute(req, res)) void koa(req, res);
  };
  return {
    handleRequest: createWorkloadHandler(
      {
        routes,
        upstreams,
        admission,
        plugins,
        report,
        maxBodyBytes,
        trustProxy: options.trustProxy ?? false,
        ...(staleSince ? { staleSince } : {}),
        ...(options.metrics ? { metrics: options.metrics } : {}),
        ...(options.deferral ? { deferral: options.deferral } : {}),
      },
      fallback,
    ),
  };
}
