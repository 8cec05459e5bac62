import type { Middleware, ParameterizedContext } from 'koa';
import { SvcError } from '../errors.js';
import type { PluginHost } from '../plugin/host.js';
import { checkAccess } from './access.js';
import type { Admission } from './admission.js';
import { checkContentLength, DEFAULT_MAX_BODY_BYTES, limitedBody } from './body-limit.js';
import type { ForwardResponse, UpstreamPools } from './proxy.js';
import { requestUrl } from './request-url.js';
import { routeMatches, type RouteTable } from './route-table.js';
import type { GatewayState, RouteEntry } from './types.js';
import { upstreamError } from './upstream-error.js';

export interface WorkloadMiddlewareOptions {
  readonly routes: RouteTable;
  readonly upstreams: UpstreamPools;
  readonly admission: Admission;
  readonly plugins: PluginHost;
  /** Largest request body forwarded to a container (default `DEFAULT_MAX_BODY_BYTES`); larger ones get 413. */
  readonly maxBodyBytes?: number;
}

const BODYLESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

/**
 * Serves workload URLs: find the workload, authenticate (unless it is
 * public), check route and method, then stream the request to a healthy
 * container and its response back.
 */
export function workloadMiddleware(options: WorkloadMiddlewareOptions): Middleware<GatewayState> {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  return async (ctx, next) => {
    // First, whatever the URL: answering anything else would mean reading (and discarding) the whole body.
    checkContentLength(ctx.req, ctx.res, maxBodyBytes);
    const match = options.routes.match(ctx.path);
    const entry = match?.entry;
    const authorized = entry ? entry.workload.http?.authorized !== false : true;
    const principal = await checkAccess({ plugins: options.plugins, entry, headers: ctx.headers, url: requestUrl(ctx), transport: 'http' });
    if (!match || !entry) return next();
    ctx.state.route = entry;
    ctx.state.principal = principal;
    checkRouteAndMethod(entry, match.rest, ctx.method);

    const abort = new AbortController();
    // The response closing before it finished means the client went away: leave the queue, stop the upstream call.
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished) abort.abort();
    });
    const slot = await options.admission.enter(entry.unit, { maxPending: entry.workload.scaling.maxPendingTasks }, abort.signal);
    // The client may have left between being handed the slot and this line running: give it back now.
    if (abort.signal.aborted) {
      slot.release();
      throw new SvcError('client_closed', 'the client went away before its request was sent on.');
    }
    // The slot is held until the answer has gone out (or the connection is gone).
    ctx.res.once('close', slot.release);
    const search = ctx.querystring ? `?${ctx.querystring}` : '';
    const response = await options.upstreams.forward(slot.instance, {
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
      body: BODYLESS.has(ctx.method) ? null : limitedBody(ctx.req, ctx.res, maxBodyBytes),
      signal: abort.signal,
    });
    await sendResponse(ctx, response, abort.signal);
  };
}

/** Passes the container's answer on: status, headers and body as it sent them. */
async function sendResponse(ctx: ParameterizedContext<GatewayState>, response: ForwardResponse, clientGone: AbortSignal): Promise<void> {
  // Small bodies of known length go out in one write with the headers; the rest streams.
  const length = Number(response.headers['content-length']);
  const small = ctx.method !== 'HEAD' && length >= 0 && length <= 65536;
  // Read before any header is set, so that a failure here still gets a clean error response.
  const body = small ? await readSmallBody(response, clientGone) : response.body;
  ctx.status = response.status;
  for (const [name, value] of Object.entries(response.headers)) ctx.set(name, value);
  ctx.set('X-Request-Id', ctx.state.requestId);
  if (ctx.method === 'HEAD') {
    // Koa would replace the container's Content-Length with its empty body's 0: write the head ourselves.
    ctx.respond = false;
    ctx.res.end();
    await response.body.dump();
    return;
  }
  ctx.body = body;
}

async function readSmallBody(response: ForwardResponse, clientGone: AbortSignal): Promise<Buffer> {
  try {
    return Buffer.from(await response.body.arrayBuffer());
  } catch (error) {
    // Nothing was sent yet, so the failure can still be told: the client left, or the container died.
    throw upstreamError(error, clientGone.aborted);
  }
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
