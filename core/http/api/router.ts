/**
 * Routes `/api/v1/…` requests to their handlers on @koa/router, one router
 * route per declared route (types.ts). Each request goes, in this order,
 * through: the route and method (404, 405; HEAD is answered as GET), a public
 * route's rate limit (429), no query parameters but those it declares (400),
 * the declared body length (413; for uploads the bundle limit),
 * authentication unless the route is public (401), reading the body (413,
 * 400; uploads are streamed by their handler instead), checking it against
 * the route's declared schema (400), checking its path and query parameters
 * against theirs (each answered as it declares: declared-parameters.ts), the
 * handler. Errors go to the gateway's one error writer
 * (error-middleware.ts), except OAuth's on the device-flow endpoints.
 */
import Router, { type RouterContext } from '@koa/router';
import type { Middleware, ParameterizedContext } from 'koa';
import { Readable } from 'node:stream';
import { SvcError } from '../../model/errors.js';
import { requestUrl } from '../../traffic/gateway/request-url.js';
import type { GatewayState } from '../../traffic/gateway/types.js';
import { apiPrincipal } from './authenticate.js';
import { checkDeclaredLength, readBody } from './body.js';
import { bodyCheck } from './declared-schemas.js';
import { declaredParameters, parameterCheck, type ParameterCheck } from './declared-parameters.js';
import { openCallBody } from './call-route.js';
import { checkContentLength, discardRestAfterAnswer } from '../../traffic/gateway/body-limit.js';
import { NDJSON, NDJSON_HINT, OCTET_STREAM, OCTET_STREAM_HINT, checkDeclaredUploadLength, openRawBody, openUpload } from './upload.js';
import { connectionSignal } from '../../traffic/gateway/connection-signal.js';
import { oauthAnswerFor } from './oauth.js';
import { RateLimiter } from './rate-limit.js';
import { pipeAnswer } from './stream-answer.js';
import { API_PREFIX, type ApiAnswer, type ApiRoute, type ApiServices } from './types.js';

type Context = ParameterizedContext<GatewayState>;
type BodyCheck = ReturnType<typeof bodyCheck>;
/** A route's checks, compiled once when the router is built. */
interface RouteChecks {
  readonly body: BodyCheck;
  readonly parameters: ParameterCheck;
}

/** A router for paths below `API_PREFIX`, matched exactly: case counts, and `/tokens/` is not `/tokens`. */
export function apiPathRouter(): Router<GatewayState> {
  return new Router<GatewayState>({ prefix: API_PREFIX, sensitive: true, strict: true });
}

export function apiRouter(routes: readonly ApiRoute[], services: ApiServices): Middleware<GatewayState> {
  const router = apiPathRouter();
  for (const route of routes) {
    const limiter = route.rateLimit ? new RateLimiter(route.rateLimit) : null;
    const checks = { body: bodyCheck(route), parameters: parameterCheck(route) };
    router.register(route.path, [route.method], (ctx) => serve(ctx, route, limiter, checks, services));
  }
  const dispatch = router.routes() as Middleware<GatewayState>;
  return (ctx, next) => {
    if (ctx.path !== '/api' && !ctx.path.startsWith('/api/')) return next();
    // Reached when no route takes this path and method: nothing after the API answers under /api.
    return dispatch(ctx, async () => refuse(router, ctx));
  };
}

/**
 * The route's path parameters, decoded. @koa/router keeps a parameter it
 * cannot decode as it came (`%zz`); the API refuses it as the client's mistake.
 */
export function routeParams(ctx: RouterContext<GatewayState>): Record<string, string> {
  checkEncoding(ctx.captures ?? []);
  return { ...ctx.params };
}

async function serve(
  ctx: RouterContext<GatewayState>,
  route: ApiRoute,
  limiter: RateLimiter | null,
  checks: RouteChecks,
  services: ApiServices,
): Promise<void> {
  const params = routeParams(ctx);
  const waitSeconds = limiter?.take(ctx.ip) ?? 0;
  if (waitSeconds > 0) {
    throw new SvcError('rate_limited', `too many requests to ${ctx.method} ${ctx.path} from this address; wait ${waitSeconds} s.`, {
      hint: `This route takes ${route.rateLimit!.perMinute} requests a minute from one address; see docs/api.md.`,
      headers: { 'Retry-After': String(waitSeconds) },
    });
  }
  checkQueryNames(ctx, route);
  let answer: ApiAnswer;
  try {
    answer = await handle(ctx, route, params, checks, services);
  } catch (thrown) {
    const oauth = route.body === 'oauth' ? oauthAnswerFor(thrown) : null;
    if (oauth === null) throw thrown;
    answer = oauth;
  }
  ctx.status = answer.status;
  for (const [name, value] of Object.entries(answer.headers ?? {})) ctx.set(name, value);
  if (answer.body instanceof Readable && ctx.method !== 'HEAD') {
    ctx.respond = false; // answered here, not by Koa
    pipeAnswer(ctx.res, answer.body, answer.headers?.['Content-Length'] !== undefined);
    if (answer.flushHeaders && !ctx.res.headersSent && !ctx.res.destroyed) ctx.res.flushHeaders();
  } else if (answer.body !== undefined) ctx.body = answer.body;
}

async function handle(
  ctx: Context,
  route: ApiRoute,
  params: Record<string, string>,
  checks: RouteChecks,
  services: ApiServices,
): Promise<ApiAnswer> {
  if (route.body === 'bundle') checkDeclaredUploadLength(ctx.req, ctx.res, services.maxBundleBytes);
  else if (route.body === 'call' || route.body === 'ndjson')
    checkContentLength(ctx.req.headers['content-length'], ctx.req, ctx.res, services.maxCallBytes);
  else if (route.body === 'file') checkContentLength(ctx.req.headers['content-length'], ctx.req, ctx.res, services.maxVolumeFileBytes);
  else if (route.body !== 'none') checkDeclaredLength(ctx.req, ctx.res);
  const principal = route.auth === 'token' ? await apiPrincipal(services.plugins, ctx.headers, requestUrl(ctx)) : null;
  const raw = route.body === 'bundle' || route.body === 'call' || route.body === 'ndjson' || route.body === 'file';
  const body = route.body === 'none' || raw ? {} : await readBody(ctx.req, ctx.res, route.body === 'oauth' ? 'json-or-form' : 'json');
  checks.body(body);
  await checks.parameters({ params, query: requestUrl(ctx).searchParams, workspace: principal?.workspace ?? null });
  const upload =
    route.body === 'bundle'
      ? () => openUpload(ctx.req, ctx.res, services.maxBundleBytes)
      : route.body === 'call'
        ? () => openCallBody(ctx.req, ctx.res, services.maxCallBytes)
        : route.body === 'ndjson'
          ? () => openRawBody(ctx.req, ctx.res, services.maxCallBytes, NDJSON, NDJSON_HINT)
          : route.body === 'file'
            ? () => openRawBody(ctx.req, ctx.res, services.maxVolumeFileBytes, OCTET_STREAM, OCTET_STREAM_HINT)
            : null;
  const query = requestUrl(ctx).searchParams;
  const request = {
    params,
    body,
    headers: ctx.headers,
    query,
    upload,
    signal: connectionSignal(ctx.req.socket),
    requestId: ctx.state.requestId,
  };
  try {
    return await (route.auth === 'none' ? route.handle(request, services) : route.handle({ ...request, principal: principal! }, services));
  } catch (error) {
    // A streamed body refused part-way (volume_full, a conflict found once it was sent): the client, still
    // sending, gets the answer, and what it sends after it is read and dropped for a few seconds at most.
    if (raw) discardRestAfterAnswer(ctx.req, ctx.res);
    throw error;
  }
}

/**
 * `not_found` when no route has this path, else `method_not_allowed` with
 * Allow: the path's methods in route order, HEAD after GET's. A parameter
 * that cannot be decoded is refused first, whatever the method.
 */
function refuse(router: Router<GatewayState>, ctx: Context): never {
  const layers = router.match(ctx.path, ctx.method).path;
  if (layers.length === 0) {
    throw new SvcError('not_found', `the API has no route ${ctx.path}.`, {
      hint: `Routes live under ${API_PREFIX}/; docs/api.md lists them.`,
    });
  }
  for (const layer of layers) checkEncoding(layer.captures(ctx.path));
  // @koa/router lists HEAD before GET on a GET route; the API has always said it after.
  const allowed = [...new Set(layers.flatMap((layer) => layer.methods.filter((method) => method !== 'HEAD')))];
  if (allowed.includes('GET')) allowed.push('HEAD');
  throw new SvcError('method_not_allowed', `${ctx.path} does not take ${ctx.method}; it takes ${allowed.join(', ')}.`, {
    headers: { Allow: allowed.join(', ') },
  });
}

/** Refuses a query parameter the route does not declare (most routes declare none). */
function checkQueryNames(ctx: Context, route: ApiRoute): void {
  const { search, searchParams } = requestUrl(ctx);
  if (search === '') return;
  const declared = declaredParameters(route)
    .filter((parameter) => parameter.in === 'query')
    .map((parameter) => parameter.name);
  if (declared.length === 0) {
    throw new SvcError('bad_request', `${ctx.method} ${ctx.path} takes no query parameters.`, {
      hint: 'Send the values in the JSON body; see docs/api.md.',
    });
  }
  const unknown = [...searchParams.keys()].find((name) => !declared.includes(name));
  if (unknown !== undefined) {
    throw new SvcError(
      'bad_request',
      `${ctx.method} ${ctx.path} takes only the query parameters ${declared.join(', ')}, not ${JSON.stringify(unknown)}.`,
      {
        hint: 'See docs/api.md.',
      },
    );
  }
}

function checkEncoding(segments: readonly string[]): void {
  for (const segment of segments) {
    try {
      decodeURIComponent(segment);
    } catch {
      throw new SvcError('bad_request', `the path segment ${JSON.stringify(segment)} is not valid percent-encoding.`);
    }
  }
}
