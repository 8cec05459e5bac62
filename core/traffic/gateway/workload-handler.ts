import type { RequestListener } from 'node:http';
import { createDomainRouting } from './domain-route.js';
import { Exchange } from './exchange.js';
import { requestHead } from './forward-headers.js';
import { requestIdOf } from './request-id.js';
import type { RouteMatch } from './route-table.js';
import { BODYLESS, WorkloadRequests, type WorkloadHandlerOptions } from './workload-requests.js';

const ABSOLUTE_FORM = /^https?:\/\//i;

/**
 * The gateway's hot path, a plain node:http listener: a request for a
 * workload URL is checked (Host, body size, access, route and method),
 * admitted, and streamed to a container and back, with no framework in
 * between (workload-requests.ts). Anything the route table does not match
 * goes to `fallback` (Koa: platform routes, and the 404 for unknown URLs).
 */
export function createWorkloadHandler(options: WorkloadHandlerOptions, fallback: RequestListener): RequestListener {
  const domains = createDomainRouting(options.plugins, options.routes);
  const requests = new WorkloadRequests(options, domains);
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
    if (!(found instanceof Promise)) return requests.serve(req, res, found, head, path, search, target!);
    found
      .then(
        (domain) => (domain === null ? fallback(req, res) : requests.serve(req, res, domain, head, path, search, target!)),
        // A host claimed but not served: the same 404 as an unknown URL.
        (error: unknown) => new Exchange(req, res, requestIdOf(head.requestId), options.report).fail(error),
      )
      .catch((error: unknown) => requests.unanswered(req, res, path, error));
  };
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
