import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { PlatformMetrics } from '../metrics/platform-metrics.js';
import type { PluginHost } from '../plugin/host.js';
import type { Instance } from '../registry/types.js';
import { checkAccess, type Access } from './access.js';
import { callLimitOf } from './call-timeout.js';
import type { Admission, Slot } from './admission.js';
import { checkContentLength, countedBody, DEFAULT_MAX_BODY_BYTES } from './body-limit.js';
import { Exchange } from './exchange.js';
import { requestHead, withoutAuthorization, type RequestHead } from './forward-headers.js';
import { createDomainRouting } from './domain-route.js';
import { checkHost } from './host-check.js';
import type { UpstreamPools } from './proxy.js';
import { requestIdOf } from './request-id.js';
import { forwardedFor, protocolOf } from './client-origin.js';
import { parseRequestUrl } from './request-url.js';
import type { ErrorReporter } from './respond-error.js';
import { checkRouteAndMethod } from './route-check.js';
import type { RouteMatch, RouteTable } from './route-table.js';

export interface WorkloadHandlerOptions {
  readonly routes: RouteTable;
  readonly upstreams: UpstreamPools;
  readonly admission: Admission;
  readonly plugins: PluginHost;
  readonly report: ErrorReporter;
  /** Largest request body forwarded to a container (default `DEFAULT_MAX_BODY_BYTES`); larger ones get 413. */
  readonly maxBodyBytes?: number;
  /** Since when the routes are stale (Consul does not answer): every answer then carries `STALE_HEADER`. */
  readonly staleSince?: () => Date | null;
  /** Believe the proxy in front's X-Forwarded-Proto and -For (client-origin.ts). */
  readonly trustProxy?: boolean;
  /** Counts each request in its workload's metrics. */
  readonly metrics?: PlatformMetrics;
}

/** `X-Svc-Routes: stale; since=<ISO time>`: the answer came by routes and instances svc knew at that time. */
export const STALE_HEADER = 'X-Svc-Routes';

const BODYLESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);
const ABSOLUTE_FORM = /^https?:\/\//i;
/** How often one request may follow its URL to a new unit (a redeploy switching it) before it gets the error. */
const MAX_REROUTES = 3;

/**
 * The gateway's hot path, a plain node:http listener: a request for a
 * workload URL is checked (Host, body size, access, route and method),
 * admitted, and streamed to a container and back, with no framework in
 * between. Anything the route table does not match goes to `fallback` (Koa:
 * platform routes, and the 404 for unknown URLs).
 */
export function createWorkloadHandler(options: WorkloadHandlerOptions, fallback: RequestListener): RequestListener {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const domains = createDomainRouting(options.plugins, options.routes);
  // Bound once: the exchange calls it only when a worker dies mid-request.
  const crashCause = (instance: Instance) => options.upstreams.crashCause(instance);
  const { metrics } = options;

  /**
   * A request for a workload URL. The common case runs synchronously from
   * the request event to the dispatch (no promise, no microtask): a public
   * workload or a token svc checks in memory, and a free slot. Anything that
   * waits (an asynchronous authenticate hook, the queue) goes on in admit().
   */
  function serve(req: IncomingMessage, res: ServerResponse, first: RouteMatch, head: RequestHead, path: string, search: string, target: string): void {
    const exchange = new Exchange(req, res, requestIdOf(head.requestId), options.report);
    if (metrics) exchange.meter(metrics.workload(first.entry.unit, first.entry.ref, first.entry.workload.name));
    const stale = options.staleSince?.();
    // Merged by Node into whatever head the answer gets: the container's, or an error's.
    if (stale) res.setHeader(STALE_HEADER, `stale; since=${stale.toISOString()}`);
    try {
      // The same order as for any URL (see app.ts): Host, then body size, then access, then route.
      checkHost(head.host);
      // Before anything else is answered: that would mean reading (and discarding) the whole body.
      checkContentLength(head.contentLength, req, res, maxBodyBytes);
      const checked = check(req, head, target, first);
      if (!(checked instanceof Promise)) {
        const slot = options.admission.tryEnter(first.entry.unit);
        if (slot !== null) return send(req, exchange, head, first, slot, search);
      }
      admit(req, exchange, head, first, path, search, target, checked).catch((error: unknown) => answerError(exchange, path, error));
    } catch (error) {
      answerError(exchange, path, error);
    }
  }

  /** Answers with the error; only a failure to write that answer itself is reported, and the connection cut. */
  function answerError(exchange: Exchange, path: string, error: unknown): void {
    try {
      exchange.fail(error);
    } catch (failure) {
      unanswered(exchange.request, exchange.response, path, failure);
    }
  }

  function unanswered(req: IncomingMessage, res: ServerResponse, path: string, error: unknown): void {
    options.report(error, { method: req.method ?? '', path, requestId: undefined });
    res.destroy();
  }

  /** Access (the one step that may wait for a hook), then whether the workload takes this method and path. */
  function check(req: IncomingMessage, head: RequestHead, target: string, match: RouteMatch): Access {
    const { entry } = match;
    let access: Access = null;
    if (entry.workload.http?.authorized !== false) {
      // The Host is checked already; the target is origin-form: the parse cannot fail, so it may wait until read.
      const url = () => parseRequestUrl(protocolOf(req, options.trustProxy), head.host, target);
      access = checkAccess({ plugins: options.plugins, entry, headers: req.headers, url, transport: 'http' });
      // The platform token authenticated this request (or it is refused below); user code never sees it.
      withoutAuthorization(head);
    }
    const method = req.method!;
    if (access instanceof Promise) {
      return access.then((principal) => {
        checkRoute(match, method);
        return principal;
      });
    }
    checkRoute(match, method);
    return access;
  }

  /** Waits for what serve() could not have at once: the access hook's answer, a slot in the queue, a reroute. */
  async function admit(req: IncomingMessage, exchange: Exchange, head: RequestHead, first: RouteMatch, path: string, search: string, target: string, checked: Access): Promise<void> {
    // On a custom domain the host names the workload: a redeploy is followed by its prefix, never by the path.
    const again = first.prefix === '' && domains ? () => domains!.again(first) : () => options.routes.match(path, head.host);
    let match = first;
    let slot: Slot;
    await checked;
    for (let attempt = 1; ; attempt++) {
      if (attempt > 1) await check(req, head, target, match);
      try {
        slot = await options.admission.enter(match.entry.unit, { maxPending: match.entry.workload.scaling.maxPendingTasks }, exchange.signal);
        break;
      } catch (error) {
        // A redeploy switched the URL to a new unit while this request waited for the old one (or was
        // on its way to it): it goes to the new unit, checked again against the new route, instead of failing.
        const now = exchange.signal.aborted || attempt >= MAX_REROUTES ? null : again();
        if (now === null || now.entry.unit === match.entry.unit) throw error;
        match = now;
      }
    }
    send(req, exchange, head, match, slot, search);
  }

  /** The request goes to the slot's container, with the gateway's own headers. */
  function send(req: IncomingMessage, exchange: Exchange, head: RequestHead, match: RouteMatch, slot: Slot, search: string): void {
    exchange.hold(slot, crashCause);
    exchange.bound(callLimitOf(match.entry.workload));
    head.forward.push(
      'x-request-id', exchange.requestId,
      'x-forwarded-for', forwardedFor(req, options.trustProxy),
      'x-forwarded-proto', protocolOf(req, options.trustProxy),
      'x-forwarded-host', head.host,
      'x-forwarded-prefix', match.prefix,
    );
    const method = req.method!;
    const body = BODYLESS.has(method) ? null : head.contentLength !== undefined ? req : countedBody(req, exchange.response, maxBodyBytes);
    exchange.sent();
    options.upstreams.dispatch(slot.instance, { method: method as 'GET', path: match.rest + search, headers: head.forward, body }, exchange);
  }

  return function handleRequest(req, res) {
    const target = originForm(req.url ?? '/');
    const head = requestHead(req.rawHeaders, !BODYLESS.has(req.method!));
    const query = target === null ? -1 : target.indexOf('?');
    const path = target === null ? '' : query === -1 ? target : target.slice(0, query);
    const match = target === null ? null : options.routes.match(path, head.host);
    let found: RouteMatch | null | Promise<RouteMatch | null> = match;
    // A host-based URL of svc's own is served at once; any other Host may be a custom domain, which wins over path routing.
    if (target !== null && match?.prefix !== '' && domains) {
      try {
        const domain = domains.resolve(head.host, path);
        found = domain instanceof Promise ? domain.then((resolved) => resolved ?? match) : (domain ?? match);
      } catch (error) {
        found = Promise.reject(error);
      }
    }
    if (found === null) return fallback(req, res);
    const search = query === -1 ? '' : target!.slice(query);
    if (!(found instanceof Promise)) return serve(req, res, found, head, path, search, target!);
    found.then(
      (domain) => (domain === null ? fallback(req, res) : serve(req, res, domain, head, path, search, target!)),
      // A host claimed but not served: the same 404 as an unknown URL.
      (error: unknown) => new Exchange(req, res, requestIdOf(head.requestId), options.report).fail(error),
    ).catch((error: unknown) => unanswered(req, res, path, error));
  };
}

/** An offline workload answers its error; then the route must take the method and path. */
function checkRoute(match: RouteMatch, method: string): void {
  if (match.entry.offline) throw match.entry.offline;
  checkRouteAndMethod(match.entry, match.rest, method);
}

/** The request target as `/path?query` (an absolute-form target names its own authority), or null when it is neither. */
function originForm(target: string): string | null {
  if (target.startsWith('/')) return target;
  if (!ABSOLUTE_FORM.test(target)) return null;
  try {
    const url = new URL(target);
    return `${url.pathname}${url.search}`;
  } catch {
    return null;
  }
}
