/** The OpenAPI facts of the routes in workspace.ts, for docs/openapi.json (core/api/openapi.ts). */
import { answer, BAD_JSON_BODY, error, json, ref, TOO_LARGE, UNAUTHORIZED } from './shared.js';
import type { Operation } from './types.js';

export const getWorkspace: Operation = {
  operationId: 'getWorkspace',
  summary: "The caller's workspace.",
  responses: { 200: answer('The workspace.', ref('Workspace')), 401: UNAUTHORIZED },
};

export const setPlan: Operation = {
  operationId: 'setPlan',
  summary: "Change the caller's workspace's plan (owners only).",
  requestBody: { required: true, content: json({ type: 'object', required: ['plan'], additionalProperties: false, properties: { plan: ref('Plan') } }) },
  responses: {
    200: answer('The updated workspace.', ref('Workspace')),
    400: BAD_JSON_BODY,
    401: UNAUTHORIZED,
    403: error('`forbidden`: the caller is not an owner.'),
    413: TOO_LARGE,
  },
};
