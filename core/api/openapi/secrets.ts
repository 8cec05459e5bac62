/** The OpenAPI facts of the routes in secrets.ts, for docs/openapi.json (core/api/openapi.ts). */
import { answer, BAD_JSON_BODY, error, json, listOf, NAME_INVALID, ref, TOO_LARGE, UNAUTHORIZED } from './shared.js';
import type { Operation, Parameter } from './types.js';

const SECRET_NAME: Parameter = { name: 'name', in: 'path', required: true, schema: { type: 'string' }, description: "The secret's name (a lowercase DNS label)." };
const BAD_VALUES = error('`bad_request`: an unknown field, a key that is no environment variable name (or one svc sets itself), a value that is not a string or too large, too many keys; `name_invalid`: the name is not a lowercase DNS label. Messages name keys, never values.');

export const listSecrets: Operation = {
  operationId: 'listSecrets',
  summary: "The caller's workspace's secrets by name: their keys, who made and changed them and when. Never a value.",
  responses: {
    200: answer('The secrets.', listOf('secrets', ref('Secret'))),
    401: UNAUTHORIZED,
  },
};

export const createSecret: Operation = {
  operationId: 'createSecret',
  summary: 'Creates a secret of the caller\'s workspace from KEY: value pairs, sealed at rest; `replace` overwrites one of the same name. The answer holds no value.',
  requestBody: { required: true, content: json(ref('SecretInput')) },
  leftToHandler: { values: ['type'] },
  responses: {
    201: { description: 'Created.', content: json(ref('Secret')), headers: { Location: { schema: { type: 'string' }, description: '/api/v1/secrets/<name>' } } },
    400: BAD_VALUES,
    401: UNAUTHORIZED,
    409: error('`conflict`: the workspace already has a secret of this name (send `replace: true`, or change its keys with PATCH).'),
    413: TOO_LARGE,
    422: NAME_INVALID,
  },
};

export const updateSecret: Operation = {
  operationId: 'updateSecret',
  summary: 'Sets keys of an existing secret (the others keep their values) and removes `remove`. Running workers see the change at the next deploy, or now with `restart: true`, which replaces the containers of every deployed workload that uses the secret.',
  pathParameters: [SECRET_NAME],
  requestBody: { required: true, content: json(ref('SecretUpdate')) },
  leftToHandler: { values: ['type'], remove: ['type'] },
  responses: {
    200: answer('The secret, and the workloads restarted.', {
      type: 'object', required: ['secret', 'restarted'], additionalProperties: false,
      properties: { secret: ref('Secret'), restarted: { type: 'array', items: { type: 'string' }, description: '`<app>/<workload>` of each workload restarted (empty without `restart`).' } },
    }),
    400: BAD_VALUES,
    401: UNAUTHORIZED,
    404: error("`secret_not_found`: the caller's workspace has no such secret."),
    413: TOO_LARGE,
    422: NAME_INVALID,
  },
};

export const deleteSecret: Operation = {
  operationId: 'deleteSecret',
  summary: 'Deletes a secret. Workloads that use it keep running with the values they started with; their next deploy is refused until it exists again.',
  pathParameters: [SECRET_NAME],
  responses: {
    204: { description: 'Deleted.' },
    401: UNAUTHORIZED,
    404: error("`secret_not_found`: the caller's workspace has no such secret (another workspace's is not found either)."),
    422: NAME_INVALID,
  },
};

export const resealSecrets: Operation = {
  operationId: 'resealSecrets',
  summary: "After a key rotation (docs/secrets.md#rotating-the-key): seals every stored value of every workspace again with the server's first key, so that the old keys can be dropped. The server's operator only.",
  requestBody: { required: false, content: json({ type: 'object', additionalProperties: false, properties: {} }) },
  responses: {
    200: answer('How many secrets and values were sealed again (0 when all were already under the first key).', {
      type: 'object', required: ['secrets', 'values'], additionalProperties: false,
      properties: { secrets: { type: 'integer' }, values: { type: 'integer' } },
    }),
    400: BAD_JSON_BODY,
    401: UNAUTHORIZED,
    403: error("`not_operator`: the caller is not the server's operator."),
    413: TOO_LARGE,
    500: error('`secrets_key_invalid`: a value was sealed with a key the server does not hold (give it every old key until the reseal is done).'),
  },
};
