import { SvcError } from '../../model/errors.js';
import { routeMatches } from './route-table.js';
import type { RouteEntry } from './types.js';

/** An endpoint answers on its one route and its methods: 404 for another path, 405 (with Allow) for another method. */
export function checkRouteAndMethod(entry: RouteEntry, rest: string, method: string): void {
  const http = entry.workload.http;
  if (!http || entry.workload.kind !== 'endpoint') return;
  if (!routeMatches(http.route, rest)) {
    throw new SvcError(
      'not_found',
      `${entry.workload.name} answers on ${entry.prefix}${http.route === '/' ? '' : http.route}, not on ${entry.prefix}${rest}.`,
    );
  }
  if (http.methods.length > 0 && !http.methods.includes(method)) {
    throw new SvcError('method_not_allowed', `${entry.workload.name} accepts ${http.methods.join(', ')}, not ${method}.`, {
      headers: { Allow: http.methods.join(', ') },
    });
  }
}
