import type { Middleware } from 'koa';
import { SvcError } from '../errors.js';
import type { PluginHost } from '../plugin/host.js';
import type { Principal } from '../plugin/types.js';
import type { UpstreamPools } from './proxy.js';
import { routeMatches, type RouteTable } from './route-table.js';
import type { GatewayState, RouteEntry } from './types.js';

export interface WorkloadMiddlewareOptions {
  readonly routes: RouteTable;
  readonly upstreams: UpstreamPools;
  readonly plugins: PluginHost;
}

const BODYLESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

/**
 * Serves workload URLs: find the workload, authenticate (unless it is
 * public), check route and method, then stream the request to a healthy
 * container and its response back.
 */
export function workloadMiddleware(options: WorkloadMiddlewareOptions): Middleware<GatewayState> {
  return async (ctx, next) => {
    const match = options.routes.match(ctx.path);
    const entry = match?.entry;
    const authorized = entry ? entry.workload.http?.authorized !== false : true;

    let principal: Principal | null = null;
    if (authorized) {
      principal = await authenticate(options.plugins, ctx.headers, ctx.href, entry?.ref.workspace ?? '');
      // Unknown URLs also need a token, so that nobody can probe which apps exist.
      if (!principal) throw unauthorized(ctx.get('authorization') !== '');
    }
    if (!match || !entry) return next();
    if (principal && principal.workspace !== entry.ref.workspace) {
      throw new SvcError('not_found', `no workload answers at ${ctx.path} in workspace "${principal.workspace}".`, {
        hint: 'Use a token of the workspace the app is deployed in.',
      });
    }
    ctx.state.route = entry;
    ctx.state.principal = principal;
    checkRouteAndMethod(entry, match.rest, ctx.method);

    const instance = options.upstreams.pick(entry.unit);
    if (!instance) {
      throw new SvcError('no_capacity', `no healthy container serves ${entry.workload.name} right now.`, {
        hint: 'Check the workload logs: its container may have failed to start.',
        headers: { 'Retry-After': '1' },
      });
    }

    const abort = new AbortController();
    // The response closing before it finished means the client went away: stop the upstream call.
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished) abort.abort();
    });
    const search = ctx.querystring ? `?${ctx.querystring}` : '';
    const response = await options.upstreams.forward(instance, {
      method: ctx.method,
      path: `${match.rest}${search}`,
      headers: ctx.headers,
      extraHeaders: {
        'x-request-id': ctx.state.requestId,
        'x-forwarded-for': ctx.request.ip,
        'x-forwarded-proto': ctx.protocol,
        'x-forwarded-host': ctx.host,
        'x-forwarded-prefix': entry.prefix,
      },
      // The platform token authenticated this request; user code never sees it.
      dropHeaders: authorized ? ['authorization'] : [],
      body: BODYLESS.has(ctx.method) ? null : ctx.req,
      signal: abort.signal,
    });
    ctx.status = response.status;
    for (const [name, value] of Object.entries(response.headers)) ctx.set(name, value);
    ctx.set('X-Request-Id', ctx.state.requestId);
    // Small bodies of known length go out in one write with the headers; the rest streams.
    const length = Number(response.headers['content-length']);
    ctx.body = length >= 0 && length <= 65536 ? Buffer.from(await response.body.arrayBuffer()) : response.body;
  };
}

async function authenticate(plugins: PluginHost, headers: Record<string, string | string[] | undefined>, href: string, workspace: string): Promise<Principal | null> {
  const principal = await plugins.first('authenticate', { headers, url: new URL(href), workspace });
  return principal ?? null;
}

function unauthorized(tokenSent: boolean): SvcError {
  return new SvcError(
    'unauthorized',
    tokenSent ? 'the bearer token is invalid, expired or revoked.' : 'this URL needs a bearer token: send the header "Authorization: Bearer <token>".',
    {
      hint: 'Use a token of the workspace (svc serve prints where the owner token is), or deploy the workload with authorized=False to make it public.',
      headers: { 'WWW-Authenticate': tokenSent ? 'Bearer error="invalid_token"' : 'Bearer' },
    },
  );
}

function checkRouteAndMethod(entry: RouteEntry, rest: string, method: string): void {
  const http = entry.workload.http;
  if (!http || entry.workload.kind !== 'endpoint') return;
  if (!routeMatches(http.route, rest)) {
    throw new SvcError('not_found', `${entry.workload.name} answers on ${entry.prefix}${http.route === '/' ? '' : http.route}, not on ${entry.prefix}${rest}.`);
  }
  if (http.methods.length > 0 && !http.methods.includes(method)) {
    throw new SvcError('method_not_allowed', `${entry.workload.name} accepts ${http.methods.join(', ')}, not ${method}.`, {
      headers: { Allow: http.methods.join(', ') },
    });
  }
}
