/**
 * The caller's workspace's secrets (core/secrets/secrets.ts): list (keys,
 * never values), create, change keys (and restart what uses it), delete. No
 * answer and no error ever holds a value.
 */
import { SvcError } from '../errors.js';
import * as doc from './openapi/secrets.js';
import { API_PREFIX, NO_STORE, type ApiRoute } from './types.js';

export const secretRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/secrets',
    auth: 'token',
    body: 'none',
    openapi: doc.listSecrets,
    async handle({ principal }, { controlPlane }) {
      return { status: 200, body: { secrets: await controlPlane.secrets.list(principal.workspace) } };
    },
  },
  {
    method: 'POST',
    path: '/secrets',
    auth: 'token',
    body: 'json',
    openapi: doc.createSecret,
    async handle({ body, principal }, { controlPlane }) {
      const secret = await controlPlane.secrets.create(principal.workspace, body['name'] as string, body['values'], principal, { replace: body['replace'] === true });
      return { status: 201, body: secret, headers: { ...NO_STORE, Location: `${API_PREFIX}/secrets/${secret.name}` } };
    },
  },
  {
    method: 'POST',
    path: '/secrets-key/reseal',
    auth: 'token',
    body: 'json',
    openapi: doc.resealSecrets,
    async handle({ body, principal }, { controlPlane }) {
      if (!(await controlPlane.accounts.isOperator(principal.subject))) {
        throw new SvcError('not_operator', "only the server's operator may seal every workspace's secrets again.", { hint: 'Sign in as the operator (at first the first owner account, whose token is <data dir>/owner-token).' });
      }
      return { status: 200, body: await controlPlane.secrets.reseal() };
    },
  },
  {
    method: 'PATCH',
    path: '/secrets/:name',
    auth: 'token',
    body: 'json',
    openapi: doc.updateSecret,
    async handle({ body, params, principal }, { controlPlane, deployments }) {
      const name = params['name']!;
      const secret = await controlPlane.secrets.set(principal.workspace, name, body['values'] ?? {}, principal, removeList(body['remove']));
      const restarted = body['restart'] === true ? await deployments.restartSecretUsers(principal.workspace, name) : [];
      return { status: 200, body: { secret, restarted }, headers: NO_STORE };
    },
  },
  {
    method: 'DELETE',
    path: '/secrets/:name',
    auth: 'token',
    body: 'none',
    openapi: doc.deleteSecret,
    async handle({ params, principal }, { controlPlane }) {
      await controlPlane.secrets.delete(principal.workspace, params['name']!);
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
