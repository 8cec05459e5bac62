/**
 * Remote runs (`.remote()`, `svc run`): start a run of one function from a
 * manifest and an uploaded bundle, call it (a pickled call in, NDJSON frames
 * out as they are printed), read and follow its logs (the image build's
 * too), end it. A run of another workspace is `not_found`, like one that
 * never was. See core/runs/runs.ts for its life.
 */
import { SvcError } from '../errors.js';
import { DEFAULT_IDLE_TIMEOUT_SECONDS, RUN_ID_SOURCE } from '../runs/types.js';
import { checkName } from '../workspaces/names.js';
import { deployableCode } from './app-deployments.js';
import { answerCall } from './call-route.js';
import { logsAnswer } from './deployment-logs.js';
import * as doc from './openapi/runs.js';
import type { ApiRoute } from './types.js';

export const runRoutes: readonly ApiRoute[] = [
  {
    method: 'POST',
    path: '/runs',
    auth: 'token',
    body: 'json',
    openapi: doc.createRun,
    async handle({ body, principal }, services) {
      const { spec, bundle, inlineSecrets } = await deployableCode(body, principal.workspace, services);
      const fn = checkName('function', body['function']);
      const idleTimeoutSeconds = (body['idleTimeoutSeconds'] as number | null | undefined) ?? DEFAULT_IDLE_TIMEOUT_SECONDS;
      const run = await services.runs.create({ spec, bundleSha256: bundle, workspace: principal.workspace, function: fn, principal, idleTimeoutSeconds, ...(inlineSecrets === undefined ? {} : { inlineSecrets }) });
      return { status: 201, body: { run }, headers: { Location: `/api/v1/runs/${run.id}` } };
    },
  },
  {
    method: 'GET',
    path: '/runs',
    auth: 'token',
    body: 'none',
    openapi: doc.listRuns,
    async handle({ principal }, services) {
      return { status: 200, body: { runs: services.runs.list(principal.workspace) } };
    },
  },
  {
    method: 'GET',
    path: '/runs/:id',
    auth: 'token',
    body: 'none',
    openapi: doc.getRun,
    async handle({ params, principal }, services) {
      return { status: 200, body: { run: services.runs.get(principal.workspace, runId(params)) } };
    },
  },
  {
    method: 'DELETE',
    path: '/runs/:id',
    auth: 'token',
    body: 'none',
    openapi: doc.endRun,
    async handle({ params, principal }, services) {
      await services.runs.end(principal.workspace, runId(params));
      return { status: 204 };
    },
  },
  {
    method: 'POST',
    path: '/runs/:id/calls',
    auth: 'token',
    body: 'call',
    openapi: doc.callRun,
    // Its canonical form (a literal id) is served before Koa: call-route.ts.
    async handle({ params, principal, headers, upload, signal, requestId }, services) {
      const answer = await answerCall(services, principal.workspace, runId(params), upload!(), headers['content-length'], signal, requestId);
      return { status: answer.status, headers: answer.headers, body: answer.body };
    },
  },
  {
    method: 'GET',
    path: '/runs/:id/logs',
    auth: 'token',
    body: 'none',
    openapi: doc.getRunLogs,
    async handle({ params, principal, headers }, services) {
      return logsAnswer(services, services.runs.logKey(principal.workspace, runId(params)), headers);
    },
  },
];

const RUN_ID = new RegExp(`^${RUN_ID_SOURCE}$`);

function runId(params: Readonly<Record<string, string>>): string {
  const id = params['id']!;
  if (!RUN_ID.test(id)) {
    throw new SvcError('bad_request', `${JSON.stringify(id)} is not a run id; run ids look like run-0123456789abcdef.`, { hint: 'GET /api/v1/runs lists the runs of your workspace.' });
  }
  return id;
}
