/**
 * Remote runs (`.remote()`, `svc run`): start a run of one function from a
 * manifest and an uploaded bundle, call it (a pickled call in, NDJSON frames
 * out as they are printed), read and follow its logs (the image build's
 * too), end it. A run of another workspace is `not_found`, like one that
 * never was. See core/services/runs/runs.ts for its life.
 */
import { SvcError } from '../../model/errors.js';
import { DEFAULT_IDLE_TIMEOUT_SECONDS, RUN_ID_SOURCE } from '../../services/runs/types.js';
import { checkName } from '../../model/names.js';
import { deployableCode } from './app-deployments.js';
import { deployedFunctionCode } from '../../services/runs/deployed-function.js';
import { answerCall } from './call-route.js';
import { logsAnswer } from './deployment-logs.js';
import { answer, BAD_QUERY, CODE_CHECKS, error, holding, idParameter, json, LOG_LINES, ref } from './openapi/shared.js';
import type { Parameter, Response } from './openapi/types.js';
import type { ApiRoute, ApiServices } from './types.js';
import type { CreateRun } from '../../services/runs/runs.js';

export const RUN_ID: Parameter = idParameter(
  'run',
  RUN_ID_SOURCE,
  'run-0123456789abcdef',
  'GET /api/v1/runs lists the runs of your workspace.',
);
const BAD_RUN_ID: Response = error('`bad_request`: the id is not a run id (`run-` and 16 hex digits), or a query parameter.');
const NO_SUCH_RUN: Response = error(
  '`not_found`: the workspace has no such run: it ended (by its client, after its idle timeout, or when svc stopped) or never existed (a run of another workspace is not found either).',
);

export const runRoutes: readonly ApiRoute[] = [
  {
    method: 'POST',
    path: '/runs',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'createRun',
      summary:
        'Start a remote run of one function from a manifest and an uploaded bundle. Answers at once (status `building`); the image builds and the first container starts in the background. At most 20 runs per workspace; a run ends when deleted, once idle for its timeout, or when svc stops.',
      requestBody: { required: true, content: json(ref('RunInput')) },
      leftToHandler: CODE_CHECKS,
      responses: {
        201: answer('The run, not ready yet.', holding('run', ref('Run'))),
        400: error(
          '`bad_request` (an unknown or missing field, a wrong type, `bundle` not a sha256, `idleTimeoutSeconds` not a whole number from 1 to 86400, both `app` and `manifest`/`bundle` or neither, a `function` that is another kind of workload: `details.kind`) or `invalid_json`.',
        ),
        404: error(
          '`not_found`: the workspace has not uploaded the bundle (upload it first), has no such deployed `app`, or the manifest has no such function (the hint lists its functions).',
        ),
        422: error(
          '`manifest_invalid` (every issue with its path in `details.issues`), `name_invalid` (the function or a name of the manifest is not a lowercase DNS label).',
        ),
        429: error(
          '`too_many_runs`: the workspace already holds `maxRunsPerWorkspace` runs (20), or the class `classParameterSets` sets of parameters (8).',
        ),
        503: error('`app_paused`: the deployed `app` is paused; `shutting_down`: svc is stopping (`Retry-After: 5`).'),
      },
    },
    async handle({ body, principal }, services) {
      const fn = checkName('function', body.function);
      const code = await runCode(body, fn, principal.workspace, services);
      const idleTimeoutSeconds = (body.idleTimeoutSeconds as number | null | undefined) ?? DEFAULT_IDLE_TIMEOUT_SECONDS;
      const run = await services.runs.create({
        ...code,
        workspace: principal.workspace,
        function: fn,
        principal,
        idleTimeoutSeconds,
        ...(body.parameters === undefined ? {} : { parameters: body.parameters }),
        ...(body.shell === true ? { shell: true } : {}),
      });
      return { status: 201, body: { run }, headers: { Location: `/api/v1/runs/${run.id}` } };
    },
  },
  {
    method: 'GET',
    path: '/runs',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'listRuns',
      summary: "The runs of the caller's workspace, oldest first. Listing does not count as using them.",
      responses: { 200: answer('The runs.', ref('RunList')), 400: BAD_QUERY },
    },
    async handle({ principal }, services) {
      return { status: 200, body: { runs: services.runs.list(principal.workspace) } };
    },
  },
  {
    method: 'GET',
    path: '/runs/:id',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getRun',
      summary:
        'One run: its status (`building`, `starting`, `ready`, `failed` with its failure), its calls, its idle timeout. Asking counts as using it.',
      pathParameters: [RUN_ID],
      responses: {
        200: answer('The run.', holding('run', ref('Run'))),
        400: BAD_RUN_ID,
        404: NO_SUCH_RUN,
      },
    },
    async handle({ params, principal }, services) {
      return { status: 200, body: { run: services.runs.get(principal.workspace, params.id!) } };
    },
  },
  {
    method: 'DELETE',
    path: '/runs/:id',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'endRun',
      summary:
        'End the run: its containers stop once the calls in flight are done, its logs go, its log followers get `event: end` (reason `deleted`).',
      pathParameters: [RUN_ID],
      responses: { 204: { description: 'Ended.' }, 400: BAD_RUN_ID, 404: NO_SUCH_RUN },
    },
    async handle({ params, principal }, services) {
      await services.runs.end(principal.workspace, params.id!);
      return { status: 204 };
    },
  },
  {
    method: 'POST',
    path: '/runs/:id/calls',
    auth: 'token',
    body: 'call',
    openapi: {
      operationId: 'callRun',
      summary:
        "Call the run's function once: waits until the run is ready (the first call waits for the build), takes a slot on a container, and streams the container's NDJSON frames back as they are written: `log` frames, then one `result` or `error` frame.",
      pathParameters: [RUN_ID],
      requestBody: {
        required: true,
        content: {
          'application/vnd.svc.call+pickle': {
            schema: {
              type: 'string',
              format: 'binary',
              description:
                '`pickle.dumps({"args": [...], "kwargs": {...}})`, at most the gateway\'s body limit (`maxBodyBytes`, 32 MiB by default).',
            },
          },
        },
      },
      responses: {
        200: {
          description:
            'One CallFrame per line, each sent as soon as it exists; the last one is a `result` or an `error` frame. When the container dies mid-call, svc ends the stream with an error frame carrying `code` (`worker_crashed`).',
          content: { 'application/x-ndjson': { schema: ref('CallFrame') } },
        },
        400: error(
          '`bad_request`: the id is not a run id, a Content-Type other than application/vnd.svc.call+pickle, a query parameter, or (from the container) a body that is not a pickled call.',
        ),
        404: error('`not_found`: the workspace has no such run, or it ended while the call waited.'),
        413: error("`payload_too_large`: the call is over the gateway's body limit (`maxBodyBytes`, 32 MiB by default)."),
        422: error(
          "`invalid_arguments` (from the container: the call passes `context`, which svc fills in); or the run's failure `bundle_invalid`.",
        ),
        429: error('`queue_full`: `max_pending_tasks` calls already wait for the run to start or for a slot (`Retry-After: 1`).'),
        500: error("The run's failure (`image_build_failed`, `container_failed`, …): it could not start."),
        502: error('`worker_crashed`, `upstream_unreachable`: the container failed before it answered.'),
        503: error('`no_capacity`, `starting`, `crash_loop`: no container could take the call, as at a workload URL.'),
      },
    },
    // Its canonical form (a literal id) is served before Koa: call-route.ts.
    async handle({ params, principal, headers, upload, signal, requestId }, services) {
      const answer = await answerCall(services, principal.workspace, params.id!, upload!(), headers['content-length'], signal, requestId);
      return { status: answer.status, headers: answer.headers, body: answer.body };
    },
  },
  {
    method: 'GET',
    path: '/runs/:id/logs',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getRunLogs',
      summary:
        "The run's log lines (image build, the run's own lines as container `run`, its containers' output outside calls); with Accept: text/event-stream, followed as Server-Sent Events. Reading counts as using the run, and a follower keeps it from idling.",
      pathParameters: [RUN_ID],
      responses: {
        200: {
          description:
            'The kept lines, oldest first (JSON); or, with `Accept: text/event-stream`, an event stream: `event: log` per line (data: a LogLine), `: ping` comments every 15 s, `event: end` when the run ends (reason `deleted`: by DELETE, idle, or svc stopping), or when the client falls more than 1 MiB behind (`lagging`). Kept in memory only.',
          content: LOG_LINES,
        },
        400: BAD_RUN_ID,
        404: NO_SUCH_RUN,
      },
    },
    async handle({ params, principal, headers }, services) {
      return logsAnswer(services, services.runs.logKey(principal.workspace, params.id!), headers);
    },
  },
];

/**
 * What a run runs: the uploaded code of a manifest (`manifest` and `bundle`), or the deployed
 * version of an app (`app`: `svc.Function.from_name`), never both.
 */
async function runCode(
  body: Readonly<Record<string, unknown>>,
  fn: string,
  workspace: string,
  services: ApiServices,
): Promise<Pick<CreateRun, 'spec' | 'bundleSha256' | 'inlineSecrets' | 'secretScope'>> {
  const uploaded = body.manifest !== undefined || body.bundle !== undefined || body.inlineSecrets !== undefined;
  if (body.app === undefined || body.app === null) {
    if (body.manifest === undefined || body.bundle === undefined) throw runCodeMissing();
    const { spec, bundle, inlineSecrets } = await deployableCode(body, workspace, services);
    return { spec, bundleSha256: bundle, ...(inlineSecrets === undefined ? {} : { inlineSecrets }) };
  }
  if (uploaded) throw runCodeMissing();
  const deployed = deployedFunctionCode(checkName('app', body.app), fn, workspace, services.deployments, body.shell === true);
  return { spec: deployed.spec, bundleSha256: deployed.bundle, secretScope: deployed.secretScope };
}

function runCodeMissing(): SvcError {
  return new SvcError(
    'bad_request',
    'a run needs either "manifest" and "bundle" (uploaded code) or "app" (its deployed version), not both.',
    {
      hint: 'The Python client sends the manifest and bundle for .remote(), and the app for svc.Function.from_name(app, name).',
      details: { field: 'app' },
    },
  );
}
