/**
 * The workspace's signing secret of completion callbacks (docs/api.md#completion-callbacks): read
 * (made on first use) and rotated, by an owner of the workspace only, since whoever holds it can
 * forge a callback that a receiver would believe.
 */
import { SvcError } from '../../model/errors.js';
import type { Principal } from '../../infra/plugin/types.js';
import { answer, BAD_JSON_BODY, error, json, ref } from './openapi/shared.js';
import type { Response } from './openapi/types.js';
import { roleOf } from './role.js';
import { NO_STORE, type ApiRoute, type ApiServices } from './types.js';

const NOT_OWNER: Response = error('`forbidden`: the caller is not an owner of the workspace.');

export const callbackSecretRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/workspace/callback-secret',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getCallbackSecret',
      summary:
        "The key that signs the workspace's completion callbacks (`X-Svc-Signature`), made the first time it is asked for or used. Owners only.",
      responses: { 200: answer('The secret.', ref('CallbackSecret')), 403: NOT_OWNER },
    },
    async handle({ principal }, { controlPlane }) {
      await requireOwner(principal, controlPlane, 'read');
      return { status: 200, body: await controlPlane.callbackSecrets.get(principal.workspace), headers: NO_STORE };
    },
  },
  {
    method: 'POST',
    path: '/workspace/callback-secret/rotate',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'rotateCallbackSecret',
      summary:
        'A new signing secret in place of the old one: every callback from now on (first attempts and retries) is signed with it. Owners only.',
      requestBody: { required: false, content: json({ type: 'object', additionalProperties: false, properties: {} }) },
      responses: { 200: answer('The new secret.', ref('CallbackSecret')), 400: BAD_JSON_BODY, 403: NOT_OWNER },
    },
    async handle({ principal }, { controlPlane }) {
      await requireOwner(principal, controlPlane, 'rotate');
      return { status: 200, body: await controlPlane.callbackSecrets.rotate(principal.workspace), headers: NO_STORE };
    },
  },
];

async function requireOwner(principal: Principal, controlPlane: ApiServices['controlPlane'], what: string): Promise<void> {
  if ((await roleOf(principal, controlPlane.accounts)) !== 'owner') {
    throw new SvcError('forbidden', `only an owner of workspace ${principal.workspace} may ${what} its callback signing secret.`, {
      hint: 'Ask an owner of the workspace (svc whoami shows your role).',
    });
  }
}
