/**
 * `POST /api/v1/runs/:id/calls` without Koa: a warm `.remote()` is one such
 * request, and Koa's context, middleware chain and router cost the gateway
 * more than the rest of the call. The raw path takes only the canonical form
 * of the route (POST, a literal run id, no query); anything else (another
 * method, an encoded id, a query string) goes on to Koa, whose router
 * answers it as it always did. Both paths judge a call in the same order with
 * the same functions: Host, request id, body size (413), token (401),
 * Content-Type (400), then the run (404 for another workspace's or an unknown
 * one); errors are written by the one error writer (respond-error.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { checkContentLength, countedBody } from '../../traffic/gateway/body-limit.js';
import { protocolOf } from '../../traffic/gateway/client-origin.js';
import { connectionSignal } from '../../traffic/gateway/connection-signal.js';
import { checkHost } from '../../traffic/gateway/host-check.js';
import { requestIdOf } from '../../traffic/gateway/request-id.js';
import { parseRequestUrl } from '../../traffic/gateway/request-url.js';
import { respondError, type ErrorReporter } from '../../traffic/gateway/respond-error.js';
import type { RawRoute } from '../../traffic/gateway/types.js';
import { receivedBody } from '../../services/runs/call-body.js';
import { CALL_CONTENT_TYPE } from '../../services/runs/call-stream.js';
import { RUN_ID_SOURCE, type CallAnswer } from '../../services/runs/types.js';
import { apiPrincipal } from './authenticate.js';
import { pipeAnswer } from './stream-answer.js';
import type { ApiServices } from './types.js';
import { checkBodyType } from './upload.js';

const CALL_TARGET = new RegExp(`^/api/v1/runs/(${RUN_ID_SOURCE})/calls$`);
const CALL_HINT = 'Send pickle.dumps({"args": [...], "kwargs": {...}}) as the body; the Python client (.remote(), svc run) does.';

export type CallRouteServices = Pick<ApiServices, 'runs' | 'plugins' | 'maxCallBytes'>;

export interface CallRouteOptions {
  readonly report: ErrorReporter;
  /** Believe the proxy in front's X-Forwarded-Proto (the URL authenticate hooks see), as for workload URLs (client-origin.ts). */
  readonly trustProxy?: boolean;
}

/** The run id of a call the raw path serves, or null for any other request (Koa's then). */
export function rawCallRunId(method: string | undefined, target: string | undefined): string | null {
  if (method !== 'POST' || target === undefined) return null;
  return CALL_TARGET.exec(target)?.[1] ?? null;
}

export function createCallRoute(services: CallRouteServices, options: CallRouteOptions): RawRoute {
  return (req, res) => {
    const id = rawCallRunId(req.method, req.url);
    if (id === null) return false;
    const requestId = requestIdOf(req.headers['x-request-id']);
    res.setHeader('X-Request-Id', requestId);
    serve(services, options, req, res, id, requestId).catch((error: unknown) => respondError(res, error, requestId, options.report));
    return true;
  };
}

async function serve(
  services: CallRouteServices,
  options: CallRouteOptions,
  req: IncomingMessage,
  res: ServerResponse,
  id: string,
  requestId: string,
): Promise<void> {
  const host = req.headers.host ?? '';
  checkHost(host);
  const declared = req.headers['content-length'];
  checkContentLength(declared, req, res, services.maxCallBytes);
  const principal = await apiPrincipal(services.plugins, req.headers, () =>
    parseRequestUrl(protocolOf(req, options.trustProxy), host, req.url!),
  );
  const signal = connectionSignal(req.socket);
  const answer = await answerCall(
    services,
    principal.workspace,
    id,
    openCallBody(req, res, services.maxCallBytes),
    declared,
    signal,
    requestId,
  );
  res.statusCode = answer.status;
  for (const name in answer.headers) res.setHeader(name, answer.headers[name]!);
  pipeAnswer(res, answer.body);
}

/** The call's body: `bad_request` unless it is a pickled call; a declared length is the request itself (judged already), any other is counted. */
export function openCallBody(req: IncomingMessage, res: ServerResponse, maxBytes: number): Readable {
  checkBodyType(req, CALL_CONTENT_TYPE, CALL_HINT);
  return req.headers['content-length'] !== undefined ? req : countedBody(req, res, maxBytes);
}

/** Reads the call's body (whole when small: call-body.ts), then sends it to the run: the answer of both paths. */
export async function answerCall(
  services: Pick<ApiServices, 'runs'>,
  workspace: string,
  id: string,
  upload: Readable,
  declaredLength: string | undefined,
  signal: AbortSignal,
  requestId: string,
): Promise<CallAnswer> {
  const body = await receivedBody(upload, declaredLength, signal);
  return services.runs.call(workspace, id, body, signal, requestId);
}
