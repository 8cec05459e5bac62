import { SvcError } from '../errors.js';
import type { PluginHost } from '../plugin/host.js';
import type { AuthRequest, Principal } from '../plugin/types.js';
import { nothingAnswers } from './nothing-answers.js';
import type { RouteEntry } from './types.js';

export interface AccessRequest {
  readonly plugins: PluginHost;
  /** The workload the URL names, or undefined when no route matched. */
  readonly entry: RouteEntry | undefined;
  readonly headers: AuthRequest['headers'];
  readonly url: URL;
  readonly transport: AuthRequest['transport'];
}

/**
 * Who may reach a workload URL, the same for HTTP and WebSocket: public
 * workloads need nothing; everything else, unknown URLs included (so nobody
 * can probe which apps exist), needs a principal from an `authenticate`
 * hook, and a principal of another workspace sees a 404.
 */
export async function checkAccess(request: AccessRequest): Promise<Principal | null> {
  const { entry } = request;
  if (entry && entry.workload.http?.authorized === false) return null;
  const principal =
    (await request.plugins.first('authenticate', { headers: request.headers, url: request.url, workspace: entry?.ref.workspace ?? '', transport: request.transport })) ?? null;
  if (!principal) throw unauthorized(request.headers.authorization !== undefined);
  // Word for word what an unknown URL gets: another workspace's workloads are not even said to exist.
  if (entry && principal.workspace !== entry.ref.workspace) throw nothingAnswers(request.url.pathname);
  return principal;
}

function unauthorized(tokenSent: boolean): SvcError {
  return new SvcError(
    'unauthorized',
    tokenSent ? 'the bearer token is invalid, expired or revoked.' : 'this URL needs a bearer token: send the header "Authorization: Bearer <token>".',
    {
      hint: 'Use a token of the workspace (svc serve prints where the owner token is), or deploy the workload with authorized=False to make it public.',
      headers: { 'WWW-Authenticate': tokenSent ? 'Bearer error="invalid_token"' : 'Bearer' },
    },
  );
}
