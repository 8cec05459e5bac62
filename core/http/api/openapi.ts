/**
 * docs/openapi.json, built from the route declarations: each route's
 * `openapi` facts (its schemas, declared with it) under its path
 * and method, in route order, then the parts every route shares (info, the
 * bearer scheme, the schemas). `npm run openapi` writes it; a test fails
 * while the file differs.
 */
import { isDeepStrictEqual } from 'node:util';
import { schemas } from './openapi/schemas.js';
import { RATE_LIMITED, TOO_LARGE, UNAUTHORIZED } from './openapi/shared.js';
import { errorCodes } from '../../model/errors.js';
import type { Parameter, Response } from './openapi/types.js';
import { API_PREFIX, type ApiRoute } from './types.js';

const INFO = {
  title: 'svc control-plane API',
  version: '1',
  description:
    'The HTTP API of `svc server` (docs/api.md). Every route answers JSON, except where it says otherwise: the logs routes followed as Server-Sent Events, and a remote call\'s NDJSON frames. Errors are `{"error": {"code", "message", "hint"}}` (docs/errors.md), except the two OAuth endpoints, which answer OAuth\'s `{"error", "error_description"}`. JSON bodies are at most 1 MiB; unknown fields are refused (the OAuth endpoints ignore them, as RFC 6749 asks).',
};

const BEARER = { type: 'http', scheme: 'bearer', description: 'An svc access token: `svc_` and 40 letters or digits.' };

export function openApiDocument(routes: readonly ApiRoute[]): Record<string, unknown> {
  const byPath = new Map<string, ApiRoute[]>();
  for (const route of routes) {
    const path = `${API_PREFIX}${route.path.replace(/:(\w+)/g, '{$1}')}`;
    byPath.set(path, [...(byPath.get(path) ?? []), route]);
  }
  return {
    openapi: '3.1.0',
    info: INFO,
    servers: [{ url: 'http://127.0.0.1:7420' }],
    // Every route needs the bearer token unless it says otherwise (operation()).
    security: [{ bearer: [] }],
    paths: Object.fromEntries([...byPath].map(([path, onPath]) => [path, pathItem(onPath)])),
    components: { securitySchemes: { bearer: BEARER }, schemas },
  };
}

/** The document as docs/openapi.json holds it: 2-space indentation, a final newline, ASCII only (as the file has always been written). */
export function openApiText(document: Record<string, unknown>): string {
  const ascii = JSON.stringify(document, null, 2).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `${ascii}\n`;
}

function pathItem(routes: readonly ApiRoute[]): Record<string, unknown> {
  const shared = routes[0]!.openapi.pathParameters;
  for (const route of routes) {
    if (!isDeepStrictEqual(route.openapi.pathParameters, shared))
      throw new Error(`${route.method} ${route.path} declares other pathParameters than ${routes[0]!.method} ${routes[0]!.path}`);
  }
  return {
    ...(shared ? { parameters: shared.map(parameterFacts) } : {}),
    ...Object.fromEntries(routes.map((route) => [route.method.toLowerCase(), operation(route)])),
  };
}

function operation(route: ApiRoute): Record<string, unknown> {
  const { operationId, summary, parameters, requestBody } = route.openapi;
  return {
    operationId,
    summary,
    // A public route (the device flow, sign-in, artifact URLs) lifts the document's bearer requirement.
    ...(route.auth === 'none' ? { security: [] } : {}),
    ...(parameters ? { parameters: parameters.map(parameterFacts) } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: declaredResponses(route),
  };
}

/**
 * A parameter as docs/openapi.json says it: its refusal as the extension
 * `x-svc-error`, the code and the status a value its schema refuses gets.
 */
function parameterFacts({ refusal, ...facts }: Parameter): Record<string, unknown> {
  return refusal === undefined ? facts : { ...facts, 'x-svc-error': { code: refusal.code, status: errorCodes[refusal.code].status } };
}

/** A route's answers: those of every route of its kind (401 without a valid token, 413 past the JSON body limit, 429 past its rate limit), then its own. */
export function declaredResponses(route: ApiRoute): Readonly<Record<number, Response>> {
  const kind: Record<number, Response> = {};
  if (route.auth === 'token') kind[401] = UNAUTHORIZED;
  if (route.body === 'json' || route.body === 'oauth') kind[413] = TOO_LARGE;
  if (route.rateLimit !== undefined) kind[429] = RATE_LIMITED;
  return { ...kind, ...route.openapi.responses };
}
