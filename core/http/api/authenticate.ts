/**
 * Who calls an API route that needs a token: the same `authenticate` hook as
 * workload URLs (gateway/access.ts), its refusal said with a hint that fits
 * the API. Koa's router and the raw call route (call-route.ts) both ask here.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { SvcError } from '../../model/errors.js';
import { checkAccess } from '../../traffic/gateway/access.js';
import type { PluginHost } from '../../infra/plugin/host.js';
import type { Principal } from '../../infra/plugin/types.js';

/** The principal, or a promise of it when a hook answers asynchronously; `unauthorized` otherwise. */
export function apiPrincipal(plugins: PluginHost, headers: IncomingHttpHeaders, url: URL | (() => URL)): Principal | Promise<Principal> {
  let access;
  try {
    access = checkAccess({ plugins, entry: undefined, headers, url, transport: 'http' });
  } catch (error) {
    throw withApiHint(error);
  }
  // Without a workload entry, checkAccess gives a principal or throws.
  return access instanceof Promise
    ? access.then(
        (principal) => principal!,
        (error: unknown) => Promise.reject(withApiHint(error)),
      )
    : access!;
}

function withApiHint(error: unknown): unknown {
  if (!(error instanceof SvcError) || error.code !== 'unauthorized') return error;
  return new SvcError('unauthorized', error.message, {
    hint: 'Send "Authorization: Bearer <token>": the owner token is in <data dir>/owner-token on the server, and `svc login` gets one of your own.',
    headers: error.headers,
  });
}
