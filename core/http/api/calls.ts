/**
 * Spawned calls (core/services/calls): spawn a pickled call of uploaded or deployed code (the
 * Python client's `spawn()`), spawn a deployed function with JSON arguments (any language), read a
 * call, wait for its outcome, cancel it. A call of another workspace is `not_found`, like one
 * that never was.
 */
import { SvcError } from '../../model/errors.js';
import { checkName } from '../../model/names.js';
import { parseManifest } from '../../model/workload/resolve.js';
import { bindClassParameters, type ClassParameterValues } from '../../model/workload/class-parameters.js';
import type { AppSpec } from '../../model/workload/types.js';
import { CALL_ID_SOURCE, type CallView } from '../../services/calls/types.js';
import { deployedFunctionCode } from '../../services/runs/deployed-function.js';
import { notSha256, unknownBundle, workspaceBundles } from './bundles.js';
import { APP, answer, error, holding, idParameter, json, ref } from './openapi/shared.js';
import type { Parameter, Response } from './openapi/types.js';
import { API_PREFIX, type ApiRoute, type ApiServices } from './types.js';

const CALL_ID: Parameter = idParameter(
  'call',
  CALL_ID_SOURCE,
  'call-0123456789abcdef0123',
  'spawn() gives it (FunctionCall.object_id), as does POST …/calls.',
);
const FUNCTION: Parameter = {
  ...APP,
  name: 'function',
  description: "The function's name (a lowercase DNS label, as the manifest names it).",
};
const BAD_CALL_ID: Response = error('`bad_request`: the id is not a call id (`call-` and 20 hex digits).');
const NO_SUCH_CALL: Response = error("`not_found`: the workspace has no such call (another workspace's is not found either).");
const CALLBACK_REFUSAL =
  "a callback URL, given or the function's `callback_url`, that svc cannot use (not http or https, not absolute, over 2048 characters, with whitespace or credentials, a host that does not resolve) or refuses against server-side request forgery (loopback, private, link-local, unique-local, or svc itself, unless the server allows `callbackAllowPrivate`)";
export const CALLBACK_HEADER = 'X-Svc-Callback-Url';
const SPAWN_REFUSALS = {
  404: error('`not_found`: no such deployed app, uploaded bundle or function (the hint lists the functions).'),
  413: error("`payload_too_large`: the arguments are over 512 KiB, or the body over the API's limit."),
  503: error('`app_paused`: the deployed app is paused.'),
} as const;

const accepted = (call: { id: string }) => ({ Location: `${API_PREFIX}/calls/${call.id}` });

/** The 202 of a call kept to run later (spawned by id, or a deferred request): its id, where to poll it, its view. */
export function acceptedCall(call: CallView): {
  status: 202;
  body: { call_id: string; status_url: string; call: CallView };
  headers: { Location: string };
} {
  return { status: 202, body: { call_id: call.id, status_url: `${API_PREFIX}/calls/${call.id}`, call }, headers: accepted(call) };
}

export const callRoutes: readonly ApiRoute[] = [
  {
    method: 'POST',
    path: '/calls',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'spawnCall',
      summary:
        "Spawn one call of a function (the Python client's `spawn()`): its pickled arguments, and its code as uploaded (`manifest` and `bundle`) or deployed (`app`). Answers 202 once the call is recorded; the leader runs it, at least once, and keeps its outcome for `callResultTtlSeconds`.",
      requestBody: { required: true, content: json(ref('CallInput')) },
      leftToHandler: { manifest: ['type'], bundle: ['pattern'], callbackUrl: ['type', 'maxLength', 'format'] },
      responses: {
        202: answer('The call, queued.', holding('call', ref('Call'))),
        400: error(
          `\`bad_request\`: an unknown or missing field, \`input\` not base64, both \`app\` and \`manifest\`/\`bundle\` or neither, a function that needs \`svc.Secret.from_dict\` values (svc never stores them), ${CALLBACK_REFUSAL}.`,
        ),
        ...SPAWN_REFUSALS,
        422: error('`manifest_invalid`, `name_invalid`.'),
      },
    },
    async handle({ body, principal }, services) {
      const fn = checkName('function', body.function);
      const input = base64Input(body.input);
      const callbackUrl =
        body.callbackUrl === undefined ? null : await services.calls.checkCallback(principal.workspace, body.callbackUrl, 'callbackUrl');
      const { spec, target } = await spawnedCode(body, fn, principal.workspace, services);
      const call = await services.calls.spawn({
        workspace: principal.workspace,
        principal,
        spec,
        function: fn,
        target,
        encoding: 'pickle',
        input,
        callbackUrl,
      });
      return { status: 202, body: { call }, headers: accepted(call) };
    },
  },
  {
    method: 'POST',
    path: '/apps/:app/functions/:function/calls',
    auth: 'token',
    body: 'json',
    openapi: {
      operationId: 'spawnFunctionCall',
      summary:
        "Spawn one call of a deployed function from any language: the JSON body's fields are its arguments, as for an endpoint. Answers 202 with the call's id and where to poll it; `GET /api/v1/calls/:id` then has the JSON result.",
      pathParameters: [APP, FUNCTION],
      parameters: [
        {
          name: CALLBACK_HEADER,
          in: 'header',
          required: false,
          schema: { type: 'string', maxLength: 2048, format: 'uri' },
          description:
            "Where svc POSTs the outcome once the call ended, signed (docs/api.md#completion-callbacks): an http or https URL (the body is the arguments, so the URL comes as a header). Without it, the function's `callback_url`, if it has one.",
        },
      ],
      requestBody: { required: false, content: json({ type: 'object', description: 'The arguments by name.' }) },
      responses: {
        202: answer('The call, queued.', ref('SpawnedCall')),
        400: error(
          `\`bad_request\`: a body that is not a JSON object, ${CALLBACK_REFUSAL}, or a function that is an @app.cls class (its methods are called from Python).`,
        ),
        ...SPAWN_REFUSALS,
        422: error('`name_invalid`: a name in the path is not a lowercase DNS label.'),
      },
    },
    async handle({ params, body, principal, headers }, services) {
      const app = params.app!;
      const fn = params.function!;
      const header = headers[CALLBACK_HEADER.toLowerCase()];
      const callbackUrl = header === undefined ? null : await services.calls.checkCallback(principal.workspace, header, CALLBACK_HEADER);
      const code = deployedFunctionCode(app, fn, principal.workspace, services.deployments);
      refuseClass(code.spec, app, fn);
      const call = await services.calls.spawn({
        workspace: principal.workspace,
        principal,
        spec: code.spec,
        function: fn,
        target: { kind: 'deployed', app },
        encoding: 'json',
        input: Buffer.from(JSON.stringify(body)),
        callbackUrl,
      });
      return acceptedCall(call);
    },
  },
  {
    method: 'GET',
    path: '/calls/:id',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getCall',
      summary: 'One spawned call: its status, attempts, times, error, and for a JSON call that succeeded its `result`.',
      pathParameters: [CALL_ID],
      responses: { 200: answer('The call.', holding('call', ref('Call'))), 400: BAD_CALL_ID, 404: NO_SUCH_CALL },
    },
    async handle({ params, principal }, services) {
      return { status: 200, body: { call: await services.calls.get(principal.workspace, params.id!) } };
    },
  },
  {
    method: 'GET',
    path: '/calls/:id/outcome',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getCallOutcome',
      summary:
        "How a call ended, as its container's last frame (`result` with `pickle` or `json`, or `error`): what `FunctionCall.get()` reads. `Prefer: wait=<seconds>` (RFC 7240, at most 60) holds the request until the call ends or the wait is over; a call still running answers 202.",
      pathParameters: [CALL_ID],
      responses: {
        200: answer('The call ended: its final frame.', ref('CallOutcome')),
        202: answer('Not ended yet (ask again).', holding('call', ref('Call'))),
        400: BAD_CALL_ID,
        404: NO_SUCH_CALL,
        409: error('`call_cancelled`: it was cancelled before it ended.'),
        410: error('`call_expired`: it ended longer ago than svc keeps outcomes.'),
      },
    },
    async handle({ params, principal, headers, signal }, services) {
      const outcome = await services.calls.outcome(
        principal.workspace,
        params.id!,
        preferredWait(headers.prefer === undefined ? undefined : String(headers.prefer)),
        signal,
      );
      if (!outcome.ended) return { status: 202, body: { call: outcome.call }, headers: { 'Retry-After': '1' } };
      return { status: 200, body: { call: outcome.call, frame: outcome.frame } };
    },
  },
  {
    method: 'GET',
    path: '/calls/:id/logs',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'getCallLogs',
      summary:
        "What a call printed, every attempt one after the other, as its container's log frames: the last 256 KiB of lines, written as they come (every 2 s) while it runs. `svc call logs` reads it.",
      pathParameters: [CALL_ID],
      responses: {
        200: answer(
          'Its lines so far (none before its first line, and none for a request sent with Prefer: respond-async).',
          ref('CallLogs'),
        ),
        400: BAD_CALL_ID,
        404: NO_SUCH_CALL,
        410: error('`call_expired`: it ended longer ago than svc keeps outcomes, and its logs with them.'),
      },
    },
    async handle({ params, principal }, services) {
      return { status: 200, body: await services.calls.logs(principal.workspace, params.id!) };
    },
  },
  {
    method: 'DELETE',
    path: '/calls/:id',
    auth: 'token',
    body: 'none',
    openapi: {
      operationId: 'cancelCall',
      summary:
        'Cancel a call that has not ended: a queued one never starts, a running one is given up (its container is told through the closed connection).',
      pathParameters: [CALL_ID],
      responses: {
        204: { description: 'Cancelled.' },
        400: BAD_CALL_ID,
        404: NO_SUCH_CALL,
        409: error('`conflict`: the call has ended already (`details.status` says how).'),
      },
    },
    async handle({ params, principal }, services) {
      await services.calls.cancel(principal.workspace, params.id!);
      return { status: 204 };
    },
  },
];

/** `Prefer: wait=<seconds>` (RFC 7240): how long the client will wait; 0 without it. */
function preferredWait(prefer: string | undefined): number {
  const wait = /(?:^|[,;]\s*)wait=(\d{1,4})\b/i.exec(prefer ?? '')?.[1];
  return wait === undefined ? 0 : Number(wait);
}

/** A pickled call sent as base64 (the field `input`, or a batch's `inputs[i]`). */
export function base64Input(value: unknown, field = 'input'): Buffer {
  if (typeof value !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0) {
    throw new SvcError(
      'bad_request',
      `the field "${field}" must be the pickled call, base64-encoded: pickle.dumps({"args": [...], "kwargs": {...}}).`,
      {
        details: { field },
      },
    );
  }
  return Buffer.from(value, 'base64');
}

/** A spawned call's code: its deployed app's, or the uploaded manifest and bundle (no inline secrets: svc stores no value). */
export async function spawnedCode(body: Readonly<Record<string, unknown>>, fn: string, workspace: string, services: ApiServices) {
  if (body.app !== undefined) {
    if (body.manifest !== undefined || body.bundle !== undefined) throw codeRefused();
    const app = checkName('app', body.app);
    const { spec } = deployedFunctionCode(app, fn, workspace, services.deployments);
    return { spec, target: { kind: 'deployed', app, ...boundParameters(spec, fn, body.parameters) } as const };
  }
  if (body.manifest === undefined || body.bundle === undefined) throw codeRefused();
  const spec = parseManifest(body.manifest);
  const bundle = body.bundle as string;
  if (!/^[0-9a-f]{64}$/.test(bundle)) throw notSha256(bundle, 'the field "bundle"');
  if (!(await workspaceBundles(services).has(workspace, bundle))) throw unknownBundle(bundle);
  if ((spec.workloads.find((w) => w.name === fn)?.secrets ?? []).some((name) => name.startsWith('@'))) {
    throw new SvcError(
      'bad_request',
      `${fn} uses svc.Secret.from_dict values, which svc never stores: a spawned call could not get them when it runs.`,
      {
        hint: 'Use a named secret (svc secret create) in their place, or deploy the app and spawn svc.Function.from_name(app, name).',
      },
    );
  }
  return { spec, target: { kind: 'uploaded', manifest: body.manifest, bundle, ...boundParameters(spec, fn, body.parameters) } as const };
}

/** `{parameters}` of a call of an @app.cls class (every value, defaults filled in); nothing for a function, which takes none. */
function boundParameters(spec: AppSpec, fn: string, given: unknown): { parameters?: ClassParameterValues } {
  const workload = spec.workloads.find((w) => w.name === fn);
  if (workload?.class === undefined) {
    if (given === undefined || given === null) return {};
    throw new SvcError('bad_request', `${fn} is a function, not an @app.cls class: it takes no "parameters".`, {
      hint: 'Leave "parameters" out of the request.',
    });
  }
  return { parameters: bindClassParameters(workload, given) };
}

/** A JSON call names no method: a class's methods are called from Python, each call naming one. */
function refuseClass(spec: AppSpec, app: string, fn: string): void {
  const methods = spec.workloads.find((w) => w.name === fn)?.class?.methods.map((m) => m.name);
  if (methods === undefined) return;
  throw new SvcError('bad_request', `${fn} is an @app.cls class (methods ${methods.join(', ')}): a call over HTTP names no method.`, {
    hint: `Call its methods from Python: svc.Cls.from_name("${app}", "${fn}")().${methods[0]}.remote(...).`,
  });
}

function codeRefused(): SvcError {
  return new SvcError(
    'bad_request',
    'a spawned call needs either "manifest" and "bundle" (uploaded code) or "app" (its deployed version), not both.',
    {
      details: { field: 'app' },
    },
  );
}
