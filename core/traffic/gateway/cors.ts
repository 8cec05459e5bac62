/**
 * Browsers of other origins at a workload URL (core/model/cors.ts). A preflight (`OPTIONS` with `Origin`
 * and `Access-Control-Request-Method`) never carries a token, by the Fetch standard: for an endpoint or a
 * realtime handler with `cors`, the gateway answers it itself; an ASGI app gets it without a token check,
 * to answer with its own middleware; anything else is checked as any request. Every other answer to an
 * allowed origin gets `Access-Control-Allow-Origin` and its kin.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { corsAllows, type CorsSpec } from '../../model/cors.js';
import { SvcError } from '../../model/errors.js';
import type { RouteEntry } from './types.js';

/** What the gateway does with a preflight for `entry`: answer it, let the app answer it, or treat it as any request. */
export type PreflightHandling = 'answer' | 'forward' | 'check';

export function isPreflight(method: string | undefined, headers: IncomingHttpHeaders): boolean {
  return method === 'OPTIONS' && headers['access-control-request-method'] !== undefined;
}

export function preflightHandling(entry: RouteEntry): PreflightHandling {
  if (entry.workload.kind === 'asgi') return 'forward';
  return entry.workload.http?.cors ? 'answer' : 'check';
}

/** 204 with what the page may do, or `forbidden` naming what it asked that the workload does not allow. */
export function answerPreflight(res: ServerResponse, entry: RouteEntry, origin: string, headers: IncomingHttpHeaders): void {
  const cors = entry.workload.http!.cors!;
  const name = `${entry.ref.app}/${entry.workload.name}`;
  if (!corsAllows(cors, origin)) {
    throw new SvcError('forbidden', `pages of ${origin} may not call ${name}: its cors allows ${cors.origins.join(', ')}.`, {
      hint: 'Add the origin to svc.Cors(origins=[...]) and deploy again.',
    });
  }
  const methods = cors.methods ?? entry.workload.http!.methods;
  const asked = String(headers['access-control-request-method']).toUpperCase();
  if (entry.workload.kind === 'endpoint' && !methods.includes(asked)) {
    throw new SvcError('forbidden', `pages of ${origin} may not send ${asked} to ${name}: its cors allows ${methods.join(', ')}.`);
  }
  const wanted = String(headers['access-control-request-headers'] ?? '')
    .split(',')
    .map((header) => header.trim().toLowerCase())
    .filter((header) => header !== '');
  const refused = wanted.filter((header) => !cors.headers.includes(header));
  if (refused.length > 0) {
    throw new SvcError(
      'forbidden',
      `pages of ${origin} may not send the header ${refused.join(', ')} to ${name}: its cors allows ${cors.headers.join(', ') || 'none'}.`,
      {
        hint: 'Add the header to svc.Cors(headers=[...]) and deploy again.',
      },
    );
  }
  addCorsHeaders(res, cors, origin);
  res.setHeader('Access-Control-Allow-Methods', methods.join(', '));
  if (cors.headers.length > 0) res.setHeader('Access-Control-Allow-Headers', cors.headers.join(', '));
  res.setHeader('Access-Control-Max-Age', String(cors.maxAge));
  res.writeHead(204).end();
}

/** The headers of any answer to an allowed origin; none to another (the browser then keeps the answer from the page). */
export function addCorsHeaders(res: ServerResponse, cors: CorsSpec, origin: string): void {
  if (!corsAllows(cors, origin)) return;
  res.setHeader('Access-Control-Allow-Origin', cors.origins.includes(origin) || cors.credentials ? origin : '*');
  res.setHeader('Vary', 'Origin');
  if (cors.credentials) res.setHeader('Access-Control-Allow-Credentials', 'true');
}
