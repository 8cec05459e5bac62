/** The OpenAPI facts of the routes in workspace.ts, for docs/openapi.json (core/api/openapi.ts). */
import { answer, BAD_JSON_BODY, error, holding, json, ref, TOO_LARGE, UNAUTHORIZED } from './shared.js';
import type { Operation } from './types.js';

export const getWorkspace: Operation = {
  operationId: 'getWorkspace',
  summary: "The caller's workspace.",
  responses: { 200: answer('The workspace.', ref('Workspace')), 401: UNAUTHORIZED },
};

/** A plan change: the body and the answers of both routes that make one. */
const planChange = {
  requestBody: { required: true, content: json(holding('plan', ref('Plan'))) },
  leftToHandler: { plan: ['type', 'enum'] },
  responses: {
    200: answer('The updated workspace.', ref('Workspace')),
    400: BAD_JSON_BODY,
    401: UNAUTHORIZED,
    403: error("`not_operator`: the caller is not the server's operator."),
    413: TOO_LARGE,
  },
} satisfies Partial<Operation>;

export const setPlan: Operation = {
  operationId: 'setPlan',
  summary: "Change the caller's workspace's plan (the server's operator only; recorded with who and when).",
  ...planChange,
};

export const getPlan: Operation = {
  operationId: 'getPlan',
  summary: "The caller's workspace's plan, every change of it (who and when), and whether the caller is the server's operator.",
  responses: { 200: answer('The plan and its changes, oldest first.', ref('PlanRecord')), 401: UNAUTHORIZED },
};

export const putPlan: Operation = {
  operationId: 'putPlan',
  summary: "Change any workspace's plan (the server's operator only; recorded with who and when).",
  parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' }, description: "The workspace's name." }],
  requestBody: planChange.requestBody,
  leftToHandler: planChange.leftToHandler,
  responses: { ...planChange.responses, 404: error('`not_found`: there is no such workspace.') },
};
