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
 * The presented token: the Authorization header only. A token in the URL
 * (`?token=`, which browsers need for WebSockets) is not accepted until the
 * WebSocket bridge exists to strip it: today the gateway forwards query
 * strings to user code, and the platform token must never reach it.
 */
export function tokenOf(request: AuthRequest): string | null {
  const authorization = request.headers['authorization'];
  // Several Authorization headers are ambiguous: refuse rather than pick one.
  if (typeof authorization !== 'string') return null;
  return BEARER.exec(authorization.trim())?.[1] ?? null;
}
