/**
 * svc:auth-token — authenticates requests by their svc API token. Built on
 * the public plugin API only, like any third-party plugin.
 */
import { PLUGIN_API_VERSION, type AuthRequest, type Plugin, type Principal } from 'svc/plugin';

export interface AuthTokenPluginOptions {
  /**
   * Where tokens are checked (the platform passes its own: memory for the
   * embedded owner token, the state store in a cluster): the principal a
   * secret belongs to, or null when it is malformed, unknown or revoked;
   * answering synchronously spares every gateway request a promise.
   */
  readonly verifier: { verify(secret: string): Principal | null | Promise<Principal | null> };
}

const BEARER = /^Bearer[ \t]+(\S+)$/i;

export default function authTokenPlugin({ verifier }: AuthTokenPluginOptions): Plugin {
  return {
    name: 'svc:auth-token',
    apiVersion: PLUGIN_API_VERSION,
    hooks: {
      // Not async: svc's verifiers answer at once, and the gateway awaits only a promise.
      authenticate(request) {
        const secret = tokenOf(request);
        // null, not an error: another plugin may recognise the request; the gateway answers 401 if none does.
        return secret === null ? null : verifier.verify(secret);
      },
    },
  };
}

/**
 * The presented token: the Authorization header, else `?token=` on a
 * WebSocket upgrade. Browsers cannot set headers on `new WebSocket(url)`, so
 * the URL is their only way; the gateway's WebSocket bridge removes the
 * parameter before the request reaches user code. Plain HTTP never accepts
 * it: a token in a URL leaks into links, history and logs, and user code
 * would receive it with the query string.
 */
export function tokenOf(request: AuthRequest): string | null {
  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    // Several Authorization headers are ambiguous: refuse rather than pick one.
    if (typeof authorization !== 'string') return null;
    return BEARER.exec(authorization.trim())?.[1] ?? null;
  }
  if (request.transport !== 'websocket') return null;
  const tokens = request.url.searchParams.getAll('token');
  return tokens.length === 1 && tokens[0] !== '' ? tokens[0]! : null;
}
