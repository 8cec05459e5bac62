/**
 * The registry token flow (distribution/distribution docs/spec/auth/token.md): a 401 with
 * `WWW-Authenticate: Bearer realm=…,service=…,scope=…` is answered by GET realm?service=&scope=
 * (Basic auth when credentials are configured); the reply's `token` (or `access_token`) is then
 * sent as `Authorization: Bearer`.
 */
import type { RegistryAuth } from './image-source.js';

export interface Challenge {
  readonly scheme: string;
  readonly params: Readonly<Record<string, string>>;
}

export function parseChallenge(header: string): Challenge {
  const space = header.indexOf(' ');
  const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase();
  const params: Record<string, string> = {};
  for (const match of header.slice(space + 1).matchAll(/([A-Za-z_]+)=(?:"([^"]*)"|([^,\s]*))/g))
    params[match[1]!.toLowerCase()] = match[2] ?? match[3] ?? '';
  return { scheme, params };
}

export function basic(auth: RegistryAuth): string {
  return `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
}

/** The Authorization header value that answers `challenge`. */
export async function answerChallenge(challenge: Challenge, auth: RegistryAuth | undefined): Promise<string> {
  if (challenge.scheme === 'basic') {
    if (!auth) throw new Error('unauthorized: authentication required');
    return basic(auth);
  }
  if (challenge.scheme !== 'bearer' || !challenge.params.realm)
    throw new Error(`unsupported authentication challenge: ${challenge.scheme}`);
  const url = new URL(challenge.params.realm);
  if (challenge.params.service) url.searchParams.set('service', challenge.params.service);
  if (challenge.params.scope) url.searchParams.set('scope', challenge.params.scope);
  const response = await fetch(url, { headers: auth ? { Authorization: basic(auth) } : {} });
  if (!response.ok) throw new Error(`unauthorized: token request to ${url.origin}${url.pathname} answered ${response.status}`);
  const body = (await response.json()) as { token?: string; access_token?: string };
  const token = body.token ?? body.access_token;
  if (!token) throw new Error('unauthorized: token response has no token');
  return `Bearer ${token}`;
}
