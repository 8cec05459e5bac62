/**
 * Call groups (core/services/calls/call-groups.ts): the Python client's `spawn_map()`. A group is
 * made with its code (as a spawned call's: uploaded or deployed) and its first batch of pickled
 * inputs; more batches follow while `more` is true; each input is then a spawned call, read by
 * its index. A group of another workspace is `not_found`, like one that never was.
 */
import { SvcError } from '../../model/errors.js';
import { checkName } from '../../model/names.js';
import { MAX_BATCH_INPUTS, MAX_GROUP_INPUTS } from '../../services/calls/call-groups.js';
import { GROUP_ID_SOURCE } from '../../services/calls/types.js';
import { base64Input, spawnedCode } from './calls.js';
import { answer, error, holding, idParameter, json, listOf, ref, wholeNumber } from './openapi/shared.js';
import type { Parameter, Response } from './openapi/types.js';
import { API_PREFIX, type ApiRoute } from './types.js';

const GROUP_ID: Parameter = idParameter(
  'call group',
  GROUP_ID_SOURCE,
  'group-0123456789abcdef0123',
  'spawn_map() gives it (FunctionCall.object_id), as does POST /api/v1/call-groups.',
);
const BAD_GROUP_ID: Response = error('`bad_request`: the id is not a call group id (`group-` and 20 hex digits).');
const NO_SUCH_GROUP: Response = error("`not_found`: the workspace has no such call group (another workspace's is not found either).");
const BATCH_REFUSALS = {
  409: error('`conflict`: the group is closed (its last batch came, or it was cancelled).'),
  413: error(
    `\`payload_too_large\`: an input over 512 KiB pickled, the group past ${MAX_GROUP_INPUTS} inputs, or the body over the API's 1 MiB.`,
  ),
} as const;
/** Where in a group `GET …/calls` starts, and how many it answers. */
const FROM = wholeNumber('from', '^(0|[1-9][0-9]{0,5})$', 'from 0 on', 'The first index to answer (default 0).');
const LIMIT = wholeNumber('limit', '^([1-9][0-9]{0,2}|1000)$', 'from 1 to 1000', 'The most inputs to answer, 1 to 1000 (default 100).');

const located = (id: string) => ({ Location: `${API_PREFIX}/call-groups/${id}` });

export const callGroupRoutes: readonly ApiRoute[] = [
  {
    method: 'POST',
    path: '/call-groups',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'spawnCallGroup',
      summary: `Spawn a call group (the Python client's \`spawn_map()\`): its code as a spawned call's (\`manifest\` and \`bundle\`, or \`app\`) and a first batch of pickled inputs (at most ${MAX_BATCH_INPUTS}). With \`"more": true\` the group stays open for \`POST …/inputs\`. Each input is recorded as a spawned call before the answer.`,
      requestBody: { required: true, content: json(ref('CallGroupInput')) },
      leftToHandler: { manifest: ['type'], bundle: ['pattern'], inputs: ['maxItems'] },
      responses: {
        202: answer("The group, and the ids of the batch's calls in their order.", ref('CallGroupBatch')),
        400: error(
          `\`bad_request\`: an unknown or missing field, an input not base64, more than ${MAX_BATCH_INPUTS} inputs, both \`app\` and \`manifest\`/\`bundle\` or neither, a function that needs \`svc.Secret.from_dict\` values.`,
        ),
        404: error('`not_found`: no such deployed app, uploaded bundle or function (the hint lists the functions).'),
        ...BATCH_REFUSALS,
        422: error('`manifest_invalid`, `name_invalid`.'),
        503: error('`app_paused`: the deployed app is paused.'),
      },
    },
    async handle({ body, principal }, services) {
      const fn = checkName('function', body.function);
      const inputs = batchOf(body.inputs);
      const { spec, target } = await spawnedCode(body, fn, principal.workspace, services);
      const recorded = await services.callGroups.create(
        { workspace: principal.workspace, principal, spec, function: fn, target },
        inputs,
        body.more === true,
      );
      return { status: 202, body: recorded, headers: located(recorded.group.id) };
    },
  },
  {
    method: 'POST',
    path: '/call-groups/:id/inputs',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'addCallGroupInputs',
      summary: `The next batch of a group's inputs (at most ${MAX_BATCH_INPUTS}), given the indexes after those recorded; \`"more": false\` (the default) closes the group.`,
      pathParameters: [GROUP_ID],
      requestBody: { required: true, content: json(ref('CallGroupInputs')) },
      leftToHandler: { inputs: ['maxItems'] },
      responses: {
        200: answer("The group, and the ids of the batch's calls in their order.", ref('CallGroupBatch')),
        400: error(`\`bad_request\`: the id, an input not base64, more than ${MAX_BATCH_INPUTS} inputs, an unknown field.`),
        404: NO_SUCH_GROUP,
        ...BATCH_REFUSALS,
      },
    },
    async handle({ params, body, principal }, services) {
      return {
        status: 200,
        body: await services.callGroups.add(principal.workspace, params.id!, batchOf(body.inputs), body.more === true),
      };
    },
  },
  {
    method: 'GET',
    path: '/call-groups/:id',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getCallGroup',
      summary: "A call group: how many inputs it has, whether more may come, its status and its inputs' count by status.",
      pathParameters: [GROUP_ID],
      responses: { 200: answer('The group.', holding('group', ref('CallGroup'))), 400: BAD_GROUP_ID, 404: NO_SUCH_GROUP },
    },
    async handle({ params, principal }, services) {
      return { status: 200, body: { group: await services.callGroups.get(principal.workspace, params.id!) } };
    },
  },
  {
    method: 'GET',
    path: '/call-groups/:id/calls',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'listCallGroupCalls',
      summary:
        "A group's inputs as calls, in index order from `from`, at most `limit`: each call's `group.index` is its place; `GET /calls/:id/outcome` reads one's result.",
      pathParameters: [GROUP_ID],
      parameters: [FROM, LIMIT],
      responses: {
        200: answer("The group's calls.", listOf('calls', ref('Call'))),
        400: error('`bad_request`: the id, or `from` / `limit` out of range.'),
        404: NO_SUCH_GROUP,
      },
    },
    async handle({ params, principal, query }, services) {
      const from = Number(query.get('from') || 0);
      const limit = Number(query.get('limit') || 100);
      return { status: 200, body: { calls: await services.callGroups.members(principal.workspace, params.id!, from, limit) } };
    },
  },
  {
    method: 'DELETE',
    path: '/call-groups/:id',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'cancelCallGroup',
      summary:
        'Cancel a call group: it takes no more inputs, and every input that has not ended is cancelled (a queued one never starts, a running one is given up).',
      pathParameters: [GROUP_ID],
      responses: {
        200: answer('How many inputs it cancelled, and the group now.', ref('CancelledCallGroup')),
        400: BAD_GROUP_ID,
        404: NO_SUCH_GROUP,
      },
    },
    async handle({ params, principal }, services) {
      const cancelled = await services.callGroups.cancel(principal.workspace, params.id!);
      return { status: 200, body: { cancelled, group: await services.callGroups.get(principal.workspace, params.id!) } };
    },
  },
];

/** The batch's pickled inputs, each base64 (`bad_request` naming the first that is not). */
function batchOf(value: unknown): Buffer[] {
  if (!Array.isArray(value)) {
    throw new SvcError('bad_request', 'the field "inputs" must be a list of pickled calls, each base64-encoded.', {
      details: { field: 'inputs' },
    });
  }
  if (value.length > MAX_BATCH_INPUTS) {
    throw new SvcError('bad_request', `a batch of ${value.length} inputs; one request brings at most ${MAX_BATCH_INPUTS}.`, {
      hint: 'Send the inputs in several batches (POST /api/v1/call-groups/<id>/inputs with "more": true until the last).',
      details: { field: 'inputs' },
    });
  }
  return value.map((input, index) => base64Input(input, `inputs[${index}]`));
}
