/** The OpenAPI facts of the routes in whoami.ts, for docs/openapi.json (core/api/openapi.ts). */
import { answer, ref, UNAUTHORIZED } from './shared.js';
import type { Operation } from './types.js';

export const whoami: Operation = {
  operationId: 'whoami',
  summary: 'Who the bearer token acts as.',
  responses: { 200: answer('The principal.', ref('WhoAmI')), 401: UNAUTHORIZED },
};
