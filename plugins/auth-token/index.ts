/**
 * svc:auth-token — authenticates requests by their svc API token. Built on
 * the public plugin API only, like any third-party plugin.
 */
import type { TokenVerifier } from '../../core/auth/verifier.js';
import { PLUGIN_API_VERSION, type AuthRequest, type Plugin } from '../../core/plugin/types.js';

export interface AuthTokenPluginOptions {
  /** Where tokens are checked: memory for the embedded owner token, the state store in a cluster. */
  readonly verifier: TokenVerifier;
}

const BEARER = /^Bearer[ \t]+(\S+)$/i;

export function authTokenPlugin({ verifier }: AuthTokenPluginOptions): Plugin {
  return {
    name: 'svc:auth-token',
    apiVersion: PLUGIN_API_VERSION,
    hooks: {
      async authenticate(request) {
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
  const authorization = request.headers['authorization'];
  if (authorization !== undefined) {
    // Several Authorization headers are ambiguous: refuse rather than pick one.
    if (typeof authorization !== 'string') return null;
    return BEARER.exec(authorization.trim())?.[1] ?? null;
  }
  if (request.transport !== 'websocket') return null;
  const tokens = request.url.searchParams.getAll('token');
  return tokens.length === 1 && tokens[0] !== '' ? tokens[0]! : null;
}
