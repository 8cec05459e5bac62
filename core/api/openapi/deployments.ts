/** The OpenAPI facts of the routes in deployments.ts, for docs/openapi.json (core/api/openapi.ts). */
import { answer, listOf, ref, UNAUTHORIZED } from './shared.js';
import type { Operation } from './types.js';

export const listDeployments: Operation = {
  operationId: 'listDeployments',
  summary: "Every workload deployed or previewed in the caller's workspace, with URLs and containers.",
  responses: {
    200: answer('The deployments.', listOf('deployments', ref('Deployment'))),
    401: UNAUTHORIZED,
  },
};
