/** `GET /api/v1/whoami`: who the bearer token acts as, for `svc` to show and scripts to check. */
import { answer, ref } from './openapi/shared.js';
import { roleOf } from './role.js';
import type { ApiRoute } from './types.js';

export const whoamiRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/whoami',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'whoami',
      summary: 'Who the bearer token acts as.',
      responses: { 200: answer('The principal.', ref('WhoAmI')) },
    },
    async handle({ principal }, { controlPlane }) {
      const role = await roleOf(principal, controlPlane.accounts);
      return {
        status: 200,
        body: { workspace: principal.workspace, subject: principal.subject, tokenId: principal.tokenId ?? null, role },
      };
    },
  },
];
