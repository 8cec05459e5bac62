/**
 * The caller's workspace's custom domains: each with its status and the DNS
 * record to publish, and a verification on demand. svc:custom-domains keeps
 * them (plugins/custom-domains); a deploy with `domain="…"` claims them.
 */
import { SvcError } from '../../model/errors.js';
import type { DomainDirectory } from '../../model/domains/types.js';
import { answer, BAD_JSON_BODY, error, listOf, ref } from './openapi/shared.js';
import type { ApiRoute, ApiServices } from './types.js';

export const domainRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/domains',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'listDomains',
      summary:
        "The caller's workspace's custom domains, each with its status (pending, verified, suspended) and the DNS TXT record to publish.",
      responses: {
        200: answer('The domains.', listOf('domains', ref('DomainView'))),
      },
    },
    async handle({ principal }, services) {
      return { status: 200, body: { domains: await directoryOf(services).list(principal.workspace) } };
    },
  },
  {
    method: 'POST',
    path: '/domains/:domain/verify',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'verifyDomain',
      summary:
        "Looks the domain's TXT record up now (with the server's dnsResolver): found, the domain is verified and served; else it stays pending and `reason` says what was found.",
      parameters: [
        { name: 'domain', in: 'path', required: true, schema: { type: 'string' }, description: 'The host name, e.g. api.example.com.' },
      ],
      responses: {
        200: answer('The domain after the lookup.', ref('DomainView')),
        400: BAD_JSON_BODY,
        404: error('`not_found`: the workspace has not claimed this domain.'),
      },
    },
    async handle({ principal, params }, services) {
      return { status: 200, body: await directoryOf(services).verify(principal.workspace, params.domain!) };
    },
  },
];

function directoryOf(services: Pick<ApiServices, 'domains'>): DomainDirectory {
  if (!services.domains)
    throw new SvcError('not_found', 'custom domains are not available on this server (the plugin svc:custom-domains is not loaded)');
  return services.domains;
}
