/**
 * The caller's workspace's secrets (core/services/secrets/secrets.ts): list (keys,
 * never values), create, change keys (and restart what uses it), delete. No
 * answer and no error ever holds a value.
 */
import { SvcError } from '../../model/errors.js';
import { NAME_PATTERN } from '../../model/names.js';
import { secretNameInvalid } from '../../services/secrets/rules.js';
import { answer, BAD_JSON_BODY, error, json, listOf, NAME_INVALID, nameRefusal, ref } from './openapi/shared.js';
import type { Parameter } from './openapi/types.js';
import { API_PREFIX, NO_STORE, type ApiRoute } from './types.js';

const SECRET_NAME: Parameter = {
  name: 'name',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: NAME_PATTERN },
  description: "The secret's name (a lowercase DNS label).",
  refusal: nameRefusal('secret', secretNameInvalid),
};
const BAD_VALUES = error(
  '`bad_request`: an unknown field, a key that is no environment variable name (or one svc sets itself), a value that is not a string or too large, too many keys; `name_invalid`: the name is not a lowercase DNS label. Messages name keys, never values.',
);

export const secretRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/secrets',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'listSecrets',
      summary: "The caller's workspace's secrets by name: their keys, who made and changed them and when. Never a value.",
      responses: {
        200: answer('The secrets.', listOf('secrets', ref('Secret'))),
      },
    },
    async handle({ principal }, { controlPlane }) {
      return { status: 200, body: { secrets: await controlPlane.secrets.list(principal.workspace) } };
    },
  },
  {
    method: 'POST',
    path: '/secrets',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'createSecret',
      summary:
        "Creates a secret of the caller's workspace from KEY: value pairs, sealed at rest; `replace` overwrites one of the same name. The answer holds no value.",
      requestBody: { required: true, content: json(ref('SecretInput')) },
      leftToHandler: { values: ['type'] },
      responses: {
        201: {
          description: 'Created.',
          content: json(ref('Secret')),
          headers: { Location: { schema: { type: 'string' }, description: '/api/v1/secrets/<name>' } },
        },
        400: BAD_VALUES,
        409: error('`conflict`: the workspace already has a secret of this name (send `replace: true`, or change its keys with PATCH).'),
        422: NAME_INVALID,
      },
    },
    async handle({ body, principal }, { controlPlane }) {
      const secret = await controlPlane.secrets.create(principal.workspace, body.name as string, body.values, principal, {
        replace: body.replace === true,
      });
      return { status: 201, body: secret, headers: { ...NO_STORE, Location: `${API_PREFIX}/secrets/${secret.name}` } };
    },
  },
  {
    method: 'POST',
    path: '/secrets-key/reseal',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'resealSecrets',
      summary:
        "After a key rotation (docs/secrets.md#rotating-the-key): seals every stored value of every workspace (and each workspace's callback signing secret) again with the server's first key, so that the old keys can be dropped. The server's operator only.",
      requestBody: { required: false, content: json({ type: 'object', additionalProperties: false, properties: {} }) },
      responses: {
        200: answer('How many secrets and values were sealed again (0 when all were already under the first key).', {
          type: 'object',
          required: ['secrets', 'values'],
          additionalProperties: false,
          properties: { secrets: { type: 'integer' }, values: { type: 'integer' } },
        }),
        400: BAD_JSON_BODY,
        403: error("`not_operator`: the caller is not the server's operator."),
        500: error(
          '`secrets_key_invalid`: a value was sealed with a key the server does not hold (give it every old key until the reseal is done).',
        ),
      },
    },
    async handle({ principal }, { controlPlane }) {
      if (!(await controlPlane.accounts.isOperator(principal.subject))) {
        throw new SvcError('not_operator', "only the server's operator may seal every workspace's secrets again.", {
          hint: 'Sign in as the operator (at first the first owner account, whose token is <data dir>/owner-token).',
        });
      }
      const sealed = await controlPlane.secrets.reseal();
      // The workspaces' callback signing secrets are sealed with the same keys: one value each.
      const callbackSecrets = await controlPlane.callbackSecrets.reseal();
      return { status: 200, body: { secrets: sealed.secrets + callbackSecrets, values: sealed.values + callbackSecrets } };
    },
  },
  {
    method: 'PATCH',
    path: '/secrets/:name',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'updateSecret',
      summary:
        'Sets keys of an existing secret (the others keep their values) and removes `remove`. Running workers see the change at the next deploy, or now with `restart: true`, which replaces the containers of every deployed workload that uses the secret.',
      pathParameters: [SECRET_NAME],
      requestBody: { required: true, content: json(ref('SecretUpdate')) },
      leftToHandler: { values: ['type'], remove: ['type'] },
      responses: {
        200: answer('The secret, and the workloads restarted.', {
          type: 'object',
          required: ['secret', 'restarted'],
          additionalProperties: false,
          properties: {
            secret: ref('Secret'),
            restarted: {
              type: 'array',
              items: { type: 'string' },
              description: '`<app>/<workload>` of each workload restarted (empty without `restart`).',
            },
          },
        }),
        400: BAD_VALUES,
        404: error("`secret_not_found`: the caller's workspace has no such secret."),
        422: NAME_INVALID,
      },
    },
    async handle({ body, params, principal }, { controlPlane, deployments }) {
      const name = params.name!;
      const secret = await controlPlane.secrets.set(principal.workspace, name, body.values ?? {}, principal, removeList(body.remove));
      const restarted = body.restart === true ? await deployments.restartSecretUsers(principal.workspace, name) : [];
      return { status: 200, body: { secret, restarted }, headers: NO_STORE };
    },
  },
  {
    method: 'DELETE',
    path: '/secrets/:name',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'deleteSecret',
      summary:
        'Deletes a secret. Workloads that use it keep running with the values they started with; their next deploy is refused until it exists again.',
      pathParameters: [SECRET_NAME],
      responses: {
        204: { description: 'Deleted.' },
        404: error("`secret_not_found`: the caller's workspace has no such secret (another workspace's is not found either)."),
        422: NAME_INVALID,
      },
    },
    async handle({ params, principal }, { controlPlane }) {
      await controlPlane.secrets.delete(principal.workspace, params.name!);
      return { status: 204 };
    },
  },
];

function removeList(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((key) => typeof key === 'string')) {
    throw new SvcError('bad_request', 'the field "remove" must be a list of key names.', { details: { field: 'remove' } });
  }
  return value as string[];
}
