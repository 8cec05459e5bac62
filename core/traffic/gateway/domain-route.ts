/**
 * Custom domains in the gateway: a request's Host goes to the plugins'
 * `resolveRoute` hook before svc's path routing. A host a plugin serves gets
 * its deployed workload at the root (the whole path goes to it); a host a
 * plugin claims but does not serve gets 404, whatever path it names, so it
 * can never reach another workload through svc's path URLs.
 */
import type { PluginHost } from '../../infra/plugin/host.js';
import type { ResolvedRoute } from '../../infra/plugin/types.js';
import { nothingAnswers } from './nothing-answers.js';
import { hostName, type RouteMatch, type RouteTable } from './route-table.js';
import { workloadPrefix } from '../../model/urls.js';

export interface DomainRouting {
  /**
   * The match on a custom domain, or null when no plugin knows the host;
   * throws `not_found` for a host not served. Synchronous when the hooks are
   * (svc's own is a lookup in memory): a promise only when one waited.
   */
  resolve(hostHeader: string, path: string): RouteMatch | null | Promise<RouteMatch | null>;
  /** The same host's match again, from the route table alone (a redeploy switched the unit). */
  again(match: RouteMatch): RouteMatch | null;
}

/** Null when no plugin implements `resolveRoute`: then the gateway never waits for one. */
export function createDomainRouting(plugins: PluginHost, routes: RouteTable): DomainRouting | null {
  if (!plugins.has('resolveRoute')) return null;
  return {
    resolve(hostHeader, path) {
      const host = hostName(hostHeader);
      if (host === '') return null;
      const resolved = plugins.firstNow('resolveRoute', { host, path });
      return resolved instanceof Promise ? resolved.then((route) => matchOf(route, path)) : matchOf(resolved, path);
    },
    again(match) {
      const entry = routes.at(match.entry.prefix);
      return entry === undefined ? null : { entry, rest: match.rest, prefix: '' };
    },
  };

  function matchOf(resolved: ResolvedRoute | null, path: string): RouteMatch | null {
    if (resolved === null) return null;
    if (!resolved.served) throw nothingAnswers(path);
    const entry = routes.at(workloadPrefix({ workspace: resolved.workspace, app: resolved.app, stage: 'deployed' }, resolved.workload));
    if (entry === undefined) throw nothingAnswers(path);
    return { entry, rest: path.startsWith('/') ? path : `/${path}`, prefix: '' };
  }
}
