/**
 * The caller's workspace's custom domains: each with its status and the DNS
 * record to publish, and a verification on demand. svc:custom-domains keeps
 * them (plugins/custom-domains); a deploy with `domain="…"` claims them.
 */
import { SvcError } from '../errors.js';
import type { DomainDirectory } from '../domains/types.js';
import * as doc from './openapi/domains.js';
import type { ApiRoute, ApiServices } from './types.js';

export const domainRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/domains',
    auth: 'token',
    body: 'none',
    openapi: doc.listDomains,
    async handle({ principal }, services) {
      return { status: 200, body: { domains: await directoryOf(services).list(principal.workspace) } };
    },
  },
  {
    method: 'POST',
    path: '/domains/:domain/verify',
    auth: 'token',
    body: 'json',
    openapi: doc.verifyDomain,
    async handle({ principal, params }, services) {
      return { status: 200, body: await directoryOf(services).verify(principal.workspace, params['domain']!) };
    },
  },
];

function directoryOf(services: Pick<ApiServices, 'domains'>): DomainDirectory {
  if (!services.domains) throw new SvcError('not_found', 'custom domains are not available on this server (the plugin svc:custom-domains is not loaded)');
  return services.domains;
}
