/**
 * Routes `/api/v1/…` requests to their handlers (no router dependency: a
 * handful of fixed paths). Each request goes, in this order, through: the
 * route and method (404, 405), no query parameters (400), the declared body
 * length (413; for uploads the bundle limit), authentication unless the route
 * is public (401), reading the body (413, 400; uploads are streamed by their
 * handler instead), the handler. Errors go to the gateway's one error writer
 * (error-middleware.ts), except OAuth's on the device-flow endpoints.
 */
import type { Middleware, ParameterizedContext } from 'koa';
import { SvcError } from '../errors.js';
import { checkAccess } from '../gateway/access.js';
import { requestUrl } from '../gateway/request-url.js';
import type { GatewayState } from '../gateway/types.js';
import type { Principal } from '../plugin/types.js';
import { checkDeclaredLength, readBody } from './body.js';
import { checkDeclaredUploadLength, openRawBody, openUpload } from './upload.js';
import { checkContentLength } from '../gateway/body-limit.js';
import { connectionSignal } from '../gateway/connection-signal.js';
import { CALL_CONTENT_TYPE } from '../runs/call-stream.js';
import { oauthAnswerFor } from './oauth.js';
import { RateLimiter } from './rate-limit.js';
import { API_PREFIX, type ApiAnswer, type ApiRoute, type ApiServices } from './types.js';

type Context = ParameterizedContext<GatewayState>;

export function apiRouter(routes: readonly ApiRoute[], services: ApiServices): Middleware<GatewayState> {
  const limiters = new Map(routes.flatMap((route) => (route.rateLimit ? [[route, new RateLimiter(route.rateLimit)] as const] : [])));
  return async (ctx, next) => {
    if (ctx.path !== '/api' && !ctx.path.startsWith('/api/')) return next();
    const { route, params } = findRoute(routes, ctx.path, ctx.method);
    const waitSeconds = limiters.get(route)?.take(ctx.req.socket.remoteAddress ?? '') ?? 0;
    if (waitSeconds > 0) {
      throw new SvcError('rate_limited', `too many requests to ${ctx.method} ${ctx.path} from this address; wait ${waitSeconds} s.`, {
        hint: `This route takes ${route.rateLimit!.perMinute} requests a minute from one address; see docs/api.md.`,
        headers: { 'Retry-After': String(waitSeconds) },
      });
    }
    if (requestUrl(ctx).search !== '') {
      throw new SvcError('bad_request', `${ctx.method} ${ctx.path} takes no query parameters.`, { hint: 'Send the values in the JSON body; see docs/api.md.' });
    }
    let answer: ApiAnswer;
    try {
      answer = await handle(ctx, route, params, services);
    } catch (thrown) {
      const oauth = route.body === 'oauth' ? oauthAnswerFor(thrown) : null;
      if (oauth === null) throw thrown;
      answer = oauth;
    }
    ctx.status = answer.status;
    for (const [name, value] of Object.entries(answer.headers ?? {})) ctx.set(name, value);
    if (answer.body !== undefined) ctx.body = answer.body;
  };
}

async function handle(ctx: Context, route: ApiRoute, params: Record<string, string>, services: ApiServices): Promise<ApiAnswer> {
  if (route.body === 'bundle') checkDeclaredUploadLength(ctx.req, ctx.res, services.maxBundleBytes);
  else if (route.body === 'call') checkContentLength(ctx.req.headers['content-length'], ctx.req, ctx.res, services.maxCallBytes);
  else if (route.body !== 'none') checkDeclaredLength(ctx.req, ctx.res);
  const principal = route.auth === 'token' ? await authenticate(ctx, services) : null;
  const raw = route.body === 'bundle' || route.body === 'call';
  const body = route.body === 'none' || raw ? {} : await readBody(ctx.req, ctx.res, route.body === 'oauth' ? 'json-or-form' : 'json');
  const upload = route.body === 'bundle' ? () => openUpload(ctx.req, ctx.res, services.maxBundleBytes) : route.body === 'call' ? () => openCall(ctx, services) : null;
  const request = { params, body, headers: ctx.headers, upload, signal: connectionSignal(ctx.req.socket), requestId: ctx.state.requestId };
  if (route.auth === 'none') return route.handle(request, services);
  return route.handle({ ...request, principal: principal! }, services);
}

function openCall(ctx: Context, services: ApiServices) {
  return openRawBody(ctx.req, ctx.res, services.maxCallBytes, CALL_CONTENT_TYPE, 'Send pickle.dumps({"args": [...], "kwargs": {...}}) as the body; the Python client (.remote(), svc run) does.');
}

/** The same hook as workload URLs (access.ts), with a hint that fits the API. */
async function authenticate(ctx: Context, services: ApiServices): Promise<Principal> {
  try {
    const principal = await checkAccess({ plugins: services.plugins, entry: undefined, headers: ctx.headers, url: requestUrl(ctx), transport: 'http' });
    return principal!; // without a workload entry, checkAccess returns a principal or throws
  } catch (error) {
    if (!(error instanceof SvcError) || error.code !== 'unauthorized') throw error;
    throw new SvcError('unauthorized', error.message, {
      hint: 'Send "Authorization: Bearer <token>": the owner token is in <data dir>/owner-token on the server, and `svc login` gets one of your own.',
      headers: error.headers,
    });
  }
}

/** The route for this path and method; `not_found` or `method_not_allowed` (with Allow) otherwise. HEAD is answered as GET. */
function findRoute(routes: readonly ApiRoute[], path: string, method: string): { route: ApiRoute; params: Record<string, string> } {
  const matches = path.startsWith(`${API_PREFIX}/`)
    ? routes.flatMap((route) => {
        const params = matchPath(route.path, path.slice(API_PREFIX.length));
        return params === null ? [] : [{ route, params }];
      })
    : [];
  if (matches.length === 0) {
    throw new SvcError('not_found', `the API has no route ${path}.`, { hint: `Routes live under ${API_PREFIX}/; docs/api.md lists them.` });
  }
  const wanted = method === 'HEAD' ? 'GET' : method;
  const match = matches.find((m) => m.route.method === wanted);
  if (match) return match;
  const allowed: string[] = [...new Set(matches.map((m) => m.route.method))];
  if (allowed.includes('GET')) allowed.push('HEAD');
  throw new SvcError('method_not_allowed', `${path} does not take ${method}; it takes ${allowed.join(', ')}.`, { headers: { Allow: allowed.join(', ') } });
}

/** Path parameters when `path` fits `pattern` (`/tokens/:id`), else null. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const have = path.split('/');
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const segment = want[i]!;
    if (segment.startsWith(':')) {
      if (have[i] === '') return null;
      params[segment.slice(1)] = decodeSegment(have[i]!);
    } else if (segment !== have[i]) return null;
  }
  return params;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new SvcError('bad_request', `the path segment ${JSON.stringify(segment)} is not valid percent-encoding.`);
  }
}
