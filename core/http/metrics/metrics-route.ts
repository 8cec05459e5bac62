/**
 * `GET /metrics` on svc's own port: the Prometheus text of every workload of
 * every workspace, so only the server's operator may read it (a bearer
 * token of the operator's account). A scraper that holds no token scrapes
 * the separate listener instead (`metricsAddress`, metrics-listener.ts).
 */
import type { Middleware } from 'koa';
import type { Accounts } from '../../services/accounts/accounts.js';
import { SvcError } from '../../model/errors.js';
import { checkAccess } from '../../traffic/gateway/access.js';
import { requestUrl } from '../../traffic/gateway/request-url.js';
import type { GatewayState } from '../../traffic/gateway/types.js';
import type { PluginHost } from '../../infra/plugin/host.js';
import type { PlatformMetrics } from '../../infra/metrics/platform-metrics.js';

export const METRICS_PATH = '/metrics';

export interface MetricsRouteOptions {
  readonly metrics: PlatformMetrics;
  readonly plugins: PluginHost;
  readonly accounts: Pick<Accounts, 'isOperator'>;
}

export function metricsRoute(options: MetricsRouteOptions): Middleware<GatewayState> {
  return async (ctx, next) => {
    if (ctx.path !== METRICS_PATH) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      throw new SvcError('method_not_allowed', `${METRICS_PATH} does not take ${ctx.method}; it takes GET, HEAD.`, {
        headers: { Allow: 'GET, HEAD' },
      });
    }
    const principal = (await checkAccess({
      plugins: options.plugins,
      entry: undefined,
      headers: ctx.headers,
      url: requestUrl(ctx),
      transport: 'http',
    }))!;
    if (!(await options.accounts.isOperator(principal.subject))) {
      throw new SvcError('not_operator', `only the server's operator may read ${METRICS_PATH}: it shows every workspace's workloads`, {
        hint: "Scrape with a token of the operator's account, or give Prometheus the separate metrics listener (metricsAddress, SVC_METRICS_ADDRESS), which asks for no token.",
      });
    }
    const { contentType, body } = await options.metrics.scrape();
    ctx.set('Cache-Control', 'no-store');
    ctx.type = contentType;
    ctx.body = body;
  };
}
