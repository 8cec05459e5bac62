/** The OpenAPI facts of the routes in app-interface.ts, for docs/openapi.json (core/api/openapi.ts). */
import { answer, APP, BAD_QUERY, error, NAME_INVALID, ref, UNAUTHORIZED } from './shared.js';
import type { Operation } from './types.js';

export const getAppInterface: Operation = {
  operationId: 'getAppInterface',
  summary: "What a client generator needs of the deployed app (svc app export): each workload's kind, docstring, URLs, route, methods, access, argument and return JSON Schemas, status, the operations of an ASGI app's OpenAPI description read at its deploy, and the versions they come from.",
  parameters: [APP],
  responses: {
    200: answer('The interface of the deployed app.', ref('AppInterface')),
    400: BAD_QUERY,
    401: UNAUTHORIZED,
    404: error("`not_found`: the caller's workspace has no such deployed app (a preview is not enough; an app of another workspace is not found either)."),
    422: NAME_INVALID,
  },
};
