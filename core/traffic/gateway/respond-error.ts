import type { ServerResponse } from 'node:http';
import { errorBody, toSvcError, type SvcError } from '../../model/errors.js';

export type ErrorReporter = (error: unknown, context: { method: string; path: string; requestId: string | undefined }) => void;

/** What an error answer consists of: the one JSON shape, with the code's status and headers. */
export interface ErrorAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/**
 * The one place the HTTP error shape is made: `{"error": {"code", "message", "hint"}}`,
 * the code's status, its headers (WWW-Authenticate, Allow, Retry-After, …)
 * and the request id. Both writers below use it.
 */
export function errorAnswer(error: SvcError, requestId: string | undefined): ErrorAnswer {
  const body = JSON.stringify(errorBody(error));
  const headers: Record<string, string> = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    ...error.headers,
  };
  if (requestId !== undefined) headers['X-Request-Id'] = requestId;
  return { status: error.status, headers, body };
}

/**
 * Answers a request with the error it failed with, on the gateway's raw path
 * and in Koa alike. Errors whose message is hidden from clients (bugs, plugin
 * failures) are reported. Nothing is sent when the client is gone
 * (`client_closed`); when the answer had already started, the connection is
 * closed, so that the client sees a broken response rather than a short one.
 */
export function respondError(res: ServerResponse, thrown: unknown, requestId: string | undefined, report: ErrorReporter): void {
  const error = toSvcError(thrown);
  if (!error.expose) report(thrown, { method: res.req.method ?? '', path: pathOf(res.req.url), requestId });
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (res.writableEnded || res.destroyed || (res.socket !== null && !res.socket.writable)) return;
  const answer = errorAnswer(error, requestId);
  // Headers set earlier (a platform route's) stay unless the error names them too.
  res.statusCode = answer.status;
  for (const name in answer.headers) res.setHeader(name, answer.headers[name]!);
  res.end(answer.body);
}

/** The path of a request target, without its query string. */
export function pathOf(target: string | undefined): string {
  if (target === undefined) return '';
  const query = target.indexOf('?');
  return query === -1 ? target : target.slice(0, query);
}
