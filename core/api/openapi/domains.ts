/** The OpenAPI facts of the routes in domains.ts, for docs/openapi.json (core/api/openapi.ts). */
import { answer, BAD_JSON_BODY, error, listOf, ref, TOO_LARGE, UNAUTHORIZED } from './shared.js';
import type { Operation } from './types.js';

export const listDomains: Operation = {
  operationId: 'listDomains',
  summary: "The caller's workspace's custom domains, each with its status (pending, verified, suspended) and the DNS TXT record to publish.",
  responses: {
    200: answer('The domains.', listOf('domains', ref('DomainView'))),
    401: UNAUTHORIZED,
  },
};

export const verifyDomain: Operation = {
  operationId: 'verifyDomain',
  summary: "Looks the domain's TXT record up now (with the server's dnsResolver): found, the domain is verified and served; else it stays pending and `reason` says what was found.",
  parameters: [{ name: 'domain', in: 'path', required: true, schema: { type: 'string' }, description: 'The host name, e.g. api.example.com.' }],
  responses: {
    200: answer('The domain after the lookup.', ref('DomainView')),
    400: BAD_JSON_BODY,
    401: UNAUTHORIZED,
    404: error('`not_found`: the workspace has not claimed this domain.'),
    413: TOO_LARGE,
  },
};
