/**
 * The HTTP server of the registry stand-in: routes as distribution's
 * router does (registry/api/v2/routes.go, descriptors.go), adds
 * `Docker-Distribution-API-Version: registry/2.0` to every /v2 answer
 * (app.go ServeHTTP), authorizes before it checks the name (app.go
 * dispatcher), and turns thrown RegistryErrors into the JSON envelope.
 * `/token` is the token service and `/cdn/<key>` the redirect target for
 * blobs; neither is part of the registry API, so neither carries the header.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { accessFor, type Authenticator } from './auth.js';
import { REDIRECT_PREFIX, type BlobHandler } from './blobs.js';
import type { Call, RegistryContext } from './context.js';
import { RegistryError, registryError, sendErrors } from './errors.js';
import type { ManifestHandler } from './manifests.js';
import { checkNameLength, matchRoute, type Route } from './names.js';
import { handleTagsList } from './tags.js';
import type { UploadHandler } from './uploads.js';

export interface Handlers {
  readonly context: RegistryContext;
  readonly auth: Authenticator;
  readonly blobs: BlobHandler;
  readonly uploads: UploadHandler;
  readonly manifests: ManifestHandler;
}

export function createRegistryServer(handlers: Handlers): Server {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    // Whatever a handler left unread is drained, so the connection stays usable.
    res.on('finish', () => {
      if (!req.readableEnded) req.resume();
    });
    serve(handlers, req, res).catch((error: unknown) => {
      sendErrors(res, error instanceof RegistryError ? error : registryError('UNKNOWN', (error as Error).message));
    });
  });
  server.keepAliveTimeout = 30_000;
  return server;
}

async function serve(handlers: Handlers, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://standin');
  let path: string;
  try {
    path = decodeURIComponent(url.pathname);
  } catch {
    return notFound(res);
  }
  if (path === '/token') return handlers.auth.handleTokenRequest(req, res, url.searchParams);
  if (path.startsWith(REDIRECT_PREFIX)) return handlers.blobs.handleRedirectTarget(req, res, path.slice(REDIRECT_PREFIX.length));

  res.setHeader('Docker-Distribution-API-Version', 'registry/2.0');
  const route = matchRoute(path);
  if (route === undefined) return notFound(res);
  if (route.kind === 'slash') {
    res.writeHead(301, { Location: route.location + url.search }).end();
    return;
  }
  const call: Call = { req, res, method: req.method ?? 'GET', query: url.searchParams };
  handlers.auth.authorize(req, accessFor(call.method, route, url.searchParams.get('from')));
  if (route.kind !== 'base') checkNameLength(route.name);
  return dispatch(handlers, call, route);
}

async function dispatch(handlers: Handlers, call: Call, route: Exclude<Route, { kind: 'slash' }>): Promise<void> {
  switch (route.kind) {
    case 'base':
      return apiBase(call);
    case 'tags':
      return handleTagsList(call, handlers.context, route.name);
    case 'manifest':
      return handlers.manifests.handle(call, route.name, route.reference);
    case 'blob':
      return handlers.blobs.handle(call, route.name, route.digest);
    case 'uploads':
      return handlers.uploads.start(call, route.name);
    case 'upload':
      return handlers.uploads.resume(call, route.name, route.uuid);
  }
}

/** `GET /v2/` → 200 `{}` (app.go apiBase). */
function apiBase(call: Call): void {
  call.res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': 2 }).end(call.method === 'HEAD' ? undefined : '{}');
}

/** gorilla/mux's answer to a path no route matches. */
function notFound(res: ServerResponse): void {
  const text = '404 page not found\n';
  res
    .writeHead(404, {
      'Content-Type': 'text/plain; charset=utf-8',
      'X-Content-Type-Options': 'nosniff',
      'Content-Length': Buffer.byteLength(text),
    })
    .end(text);
}
