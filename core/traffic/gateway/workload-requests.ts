/**
 * A request for a workload URL once the handler (workload-handler.ts) found
 * its route: checked (Host, body size, access, route and method), admitted,
 * and streamed to a container and back, with no framework in between.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SvcError } from '../../model/errors.js';
import type { PlatformMetrics } from '../../infra/metrics/platform-metrics.js';
import type { PluginHost } from '../../infra/plugin/host.js';
import { checkAccess, type Access } from './access.js';
import { addCorsHeaders, answerPreflight, isPreflight, preflightHandling } from './cors.js';
import { callLimitOf } from '../../model/call-timeout.js';
import type { Admission, Slot } from './admission.js';
import { checkContentLength, countedBody, DEFAULT_MAX_BODY_BYTES, readWholeBody } from './body-limit.js';
import { type Deferral, prefersAsync, sentBySvc } from './deferred.js';
import { forwardedFor, protocolOf } from './client-origin.js';
import type { DomainRouting } from './domain-route.js';
import { Exchange } from './exchange.js';
import { withoutAuthorization, withoutPrefer, type RequestHead } from './forward-headers.js';
import { checkHost } from './host-check.js';
import type { UpstreamPools } from './proxy.js';
import { requestIdOf } from './request-id.js';
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
  /** Takes `Prefer: respond-async` (deferred.ts); without it the preference is ignored, as RFC 7240 allows. */
  readonly deferral?: Deferral;
}

/** `X-Svc-Routes: stale; since=<ISO time>`: the answer came by routes and instances svc knew at that time. */
export const STALE_HEADER = 'X-Svc-Routes';

/** Methods whose requests carry no body to forward. */
export const BODYLESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);
/** How often one request may follow its URL to a new unit (a redeploy switching it) before it gets the error. */
const MAX_REROUTES = 3;

export class WorkloadRequests {
  readonly #options: WorkloadHandlerOptions;
  readonly #maxBodyBytes: number;
  readonly #domains: DomainRouting | null;
  /** Bound once: the exchange calls it only when a worker dies mid-request. */
  readonly #crashCause: UpstreamPools['crashCause'];

  constructor(options: WorkloadHandlerOptions, domains: DomainRouting | null) {
    this.#options = options;
    this.#maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.#domains = domains;
    this.#crashCause = (instance) => options.upstreams.crashCause(instance);
  }

  /**
   * A request for a workload URL. The common case runs synchronously from
   * the request event to the dispatch (no promise, no microtask): a public
   * workload or a token svc checks in memory, and a free slot. Anything that
   * waits (an asynchronous authenticate hook, the queue) goes on in #admit().
   */
  serve(
    req: IncomingMessage,
    res: ServerResponse,
    first: RouteMatch,
    head: RequestHead,
    path: string,
    search: string,
    target: string,
  ): void {
    const exchange = new Exchange(req, res, requestIdOf(head.requestId), this.#options.report);
    if (this.#options.metrics) exchange.meter(this.#options.metrics.workload(first.entry.unit, first.entry.ref, first.entry.workload.name));
    const stale = this.#options.staleSince?.();
    // Merged by Node into whatever head the answer gets: the container's, or an error's.
    if (stale) res.setHeader(STALE_HEADER, `stale; since=${stale.toISOString()}`);
    try {
      // The same order as for any URL (see app.ts): Host, then body size, then access, then route.
      checkHost(head.host);
      // Before anything else is answered: that would mean reading (and discarding) the whole body.
      checkContentLength(head.contentLength, req, res, this.#maxBodyBytes);
      // A browser of another origin (rare on this path: one comparison when not).
      if (head.origin !== undefined && this.#crossOrigin(req, res, first, head.origin)) return;
      const checked = this.#check(req, head, target, first);
      if (this.#defers(req, first)) {
        this.#defer(req, exchange, head, first, target, checked).catch((error: unknown) => this.#answerError(exchange, path, error));
        return;
      }
      if (!(checked instanceof Promise)) {
        const slot = this.#options.admission.tryEnter(first.entry.unit);
        if (slot !== null) return this.#send(req, exchange, head, first, slot, search);
      }
      this.#admit(req, exchange, head, first, path, search, target, checked).catch((error: unknown) =>
        this.#answerError(exchange, path, error),
      );
    } catch (error) {
      this.#answerError(exchange, path, error);
    }
  }

  /** Answers with the error; only a failure to write that answer itself is reported, and the connection cut. */
  #answerError(exchange: Exchange, path: string, error: unknown): void {
    try {
      exchange.fail(error);
    } catch (failure) {
      this.unanswered(exchange.request, exchange.response, path, failure);
    }
  }

  unanswered(req: IncomingMessage, res: ServerResponse, path: string, error: unknown): void {
    this.#options.report(error, { method: req.method ?? '', path, requestId: undefined });
    res.destroy();
  }

  /** True when the request was a preflight the gateway answered; else the answer will carry the workload's CORS headers. */
  #crossOrigin(req: IncomingMessage, res: ServerResponse, match: RouteMatch, origin: string): boolean {
    const { entry } = match;
    if (isPreflight(req.method, req.headers) && preflightHandling(entry) === 'answer') {
      answerPreflight(res, entry, origin, req.headers);
      return true;
    }
    const cors = entry.workload.http?.cors;
    if (cors) addCorsHeaders(res, cors, origin);
    return false;
  }

  /** Access (the one step that may wait for a hook), then whether the workload takes this method and path. */
  #check(req: IncomingMessage, head: RequestHead, target: string, match: RouteMatch): Access {
    const { entry } = match;
    let access: Access = null;
    // No preflight carries a token (Fetch standard): an ASGI app's goes to its own CORS middleware unchecked.
    const preflight = head.origin !== undefined && isPreflight(req.method, req.headers) && preflightHandling(entry) === 'forward';
    // A deferred request svc sends now had its access checked when it was deferred.
    if (!preflight && entry.workload.http?.authorized !== false && !sentBySvc(req.headers, this.#options.deferral?.secret)) {
      // The Host is checked already; the target is origin-form: the parse cannot fail, so it may wait until read.
      const url = () => parseRequestUrl(protocolOf(req, this.#options.trustProxy), head.host, target);
      access = checkAccess({ plugins: this.#options.plugins, entry, headers: req.headers, url, transport: 'http' });
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
  async #admit(
    req: IncomingMessage,
    exchange: Exchange,
    head: RequestHead,
    first: RouteMatch,
    path: string,
    search: string,
    target: string,
    checked: Access,
  ): Promise<void> {
    // On a custom domain the host names the workload: a redeploy is followed by its prefix, never by the path.
    const again =
      first.prefix === '' && this.#domains ? () => this.#domains!.again(first) : () => this.#options.routes.match(path, head.host);
    let match = first;
    let slot: Slot;
    await checked;
    for (let attempt = 1; ; attempt++) {
      if (attempt > 1) await this.#check(req, head, target, match);
      try {
        slot = await this.#options.admission.enter(
          match.entry.unit,
          { maxPending: match.entry.workload.scaling.maxPendingTasks },
          exchange.signal,
        );
        break;
      } catch (error) {
        // A redeploy switched the URL to a new unit while this request waited for the old one (or was
        // on its way to it): it goes to the new unit, checked again against the new route, instead of failing.
        const now = exchange.signal.aborted || attempt >= MAX_REROUTES ? null : again();
        if (now === null || now.entry.unit === match.entry.unit) throw error;
        match = now;
      }
    }
    this.#send(req, exchange, head, match, slot, search);
  }

  /**
   * Whether to keep the request as a call: it asks `Prefer: respond-async`, svc is not sending it
   * now, and its outcome has a reader (a public workload called without a token answers at once).
   */
  #defers(req: IncomingMessage, match: RouteMatch): boolean {
    const deferral = this.#options.deferral;
    if (deferral === undefined || !prefersAsync(req.headers) || sentBySvc(req.headers, deferral.secret)) return false;
    return match.entry.workload.http?.authorized !== false || req.headers.authorization !== undefined;
  }

  /** Keeps the request as a call to send later, and answers 202 with where to poll it. */
  async #defer(
    req: IncomingMessage,
    exchange: Exchange,
    head: RequestHead,
    match: RouteMatch,
    target: string,
    checked: Access,
  ): Promise<void> {
    const { entry } = match;
    // Access first, as for any request: a stranger learns nothing of the workload's kind.
    const principal = entry.workload.http?.authorized === false ? await this.#owner(req, head, target, match) : await checked;
    if (entry.workload.kind === 'realtime') {
      throw new SvcError(
        'bad_request',
        `${entry.workload.name} is a realtime workload: its URL holds a WebSocket open, which cannot be answered later.`,
        { hint: 'Send Prefer: respond-async to the URL of an endpoint or an ASGI app.' },
      );
    }
    const method = req.method!;
    const body = BODYLESS.has(method) ? Buffer.alloc(0) : await readWholeBody(req, exchange.response, this.#maxBodyBytes);
    const callback = req.headers['x-svc-callback-url'];
    const kept = await this.#options.deferral!.keep({
      entry,
      principal,
      request: { method, target, headers: withoutPrefer(head), body: body.toString('base64') },
      callbackHeader: Array.isArray(callback) ? callback[0] : callback,
    });
    exchange.response
      .writeHead(202, {
        'content-type': 'application/json; charset=utf-8',
        location: kept.location,
        'preference-applied': 'respond-async',
        'x-request-id': exchange.requestId,
      })
      .end(JSON.stringify(kept.body));
  }

  /** Who sends a request to a public workload, by its token: the outcome of a deferred one is theirs to read. */
  #owner(req: IncomingMessage, head: RequestHead, target: string, match: RouteMatch): Access {
    const url = () => parseRequestUrl(protocolOf(req, this.#options.trustProxy), head.host, target);
    const owner = checkAccess({
      plugins: this.#options.plugins,
      entry: match.entry,
      headers: req.headers,
      url,
      transport: 'http',
      evenIfPublic: true,
    });
    withoutAuthorization(head);
    return owner;
  }

  /** The request goes to the slot's container, with the gateway's own headers. */
  #send(req: IncomingMessage, exchange: Exchange, head: RequestHead, match: RouteMatch, slot: Slot, search: string): void {
    exchange.hold(slot, this.#crashCause);
    exchange.bound(callLimitOf(match.entry.workload));
    head.forward.push(
      'x-request-id',
      exchange.requestId,
      'x-forwarded-for',
      forwardedFor(req, this.#options.trustProxy),
      'x-forwarded-proto',
      protocolOf(req, this.#options.trustProxy),
      'x-forwarded-host',
      head.host,
      'x-forwarded-prefix',
      match.prefix,
    );
    const method = req.method!;
    const body = BODYLESS.has(method)
      ? null
      : head.contentLength !== undefined
        ? req
        : countedBody(req, exchange.response, this.#maxBodyBytes);
    exchange.sent();
    this.#options.upstreams.dispatch(
      slot.instance,
      { method: method as 'GET', path: match.rest + search, headers: head.forward, body },
      exchange,
    );
  }
}

/** An offline workload answers its error; then the route must take the method and path. */
function checkRoute(match: RouteMatch, method: string): void {
  if (match.entry.offline) throw match.entry.offline;
  checkRouteAndMethod(match.entry, match.rest, method);
}
