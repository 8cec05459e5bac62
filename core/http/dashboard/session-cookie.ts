/**
 * The browser's side of a dashboard session: the `svc_session` cookie
 * (HttpOnly, SameSite=Lax, Secure when the browser came over HTTPS, path /),
 * who it signs in, and the CSRF check of every state-changing form.
 */
import { timingSafeEqual } from 'node:crypto';
import type { ParameterizedContext } from 'koa';
import { SvcError } from '../../model/errors.js';
import type { GatewayState } from '../../traffic/gateway/types.js';
import { SESSION_MAX_MS } from '../../services/accounts/sessions.js';
import type { DashboardServices, Viewer } from './types.js';

export type Context = ParameterizedContext<GatewayState>;

export { LOGIN_CSRF_COOKIE, SESSION_COOKIE } from '../../traffic/gateway/platform-cookies.js';
import { SESSION_COOKIE } from '../../traffic/gateway/platform-cookies.js';

/** HTTPS as the browser sees it: TLS here, or the configured public URL (a proxy that terminates TLS in front). */
export function cameOverHttps(ctx: Context, services: Pick<DashboardServices, 'publicUrl'>): boolean {
  return ctx.secure || (services.publicUrl?.startsWith('https:') ?? false);
}

export function setCookie(
  ctx: Context,
  services: Pick<DashboardServices, 'publicUrl'>,
  name: string,
  value: string | null,
  maxAgeMs = SESSION_MAX_MS,
): void {
  const secure = cameOverHttps(ctx, services);
  // The cookies library refuses Secure on a plain connection; behind a TLS proxy the browser's side is HTTPS.
  ctx.cookies.secure = secure;
  ctx.cookies.set(name, value, {
    httpOnly: true,
    sameSite: 'lax',
    secure,
    path: '/',
    overwrite: true,
    ...(value === null ? {} : { maxAge: maxAgeMs }),
  });
}

/**
 * Who the request's session cookie signs in, or null. A session whose
 * account or workspace is gone is ended. In a browser only a navigation (a
 * page, a form) is signed in: a script's request (Fetch Metadata: a
 * `Sec-Fetch-Site`, and a `Sec-Fetch-Mode` other than navigate) gets
 * nothing, so a page of some app served from this same host cannot read the
 * dashboard or its CSRF tokens. `subresource` lets in one
 * the caller checks itself (the log stream, which carries the CSRF token).
 */
export async function readViewer(
  ctx: Context,
  services: DashboardServices,
  options: { subresource?: boolean } = {},
): Promise<Viewer | null> {
  // Browsers send Sec-Fetch-Site with Sec-Fetch-Mode; a client that sends no Sec-Fetch-Site is no browser's script.
  const script = ctx.get('Sec-Fetch-Site') !== '' && ctx.get('Sec-Fetch-Mode') !== 'navigate';
  if (script && options.subresource !== true) return null;
  const secret = ctx.cookies.get(SESSION_COOKIE);
  if (secret === undefined) return null;
  const session = await services.controlPlane.sessions.find(secret);
  if (session === null) return null;
  const account = await services.controlPlane.accounts.get(session.accountId);
  if (account === null || !account.workspaces.includes(session.workspace)) {
    await services.controlPlane.sessions.end(secret);
    return null;
  }
  return { secret, session, account, principal: { workspace: session.workspace, subject: account.id } };
}

/**
 * Refuses a form without this session's CSRF token (`_csrf`), or one posted
 * from another site (`Origin`, when the browser sends it): 403 `forbidden`.
 */
export function checkCsrf(ctx: Context, body: Readonly<Record<string, unknown>>, expected: string): void {
  const origin = ctx.get('Origin');
  if (origin !== '' && hostOf(origin) !== ctx.host) {
    throw new SvcError('forbidden', `a form of this dashboard was posted from ${origin}; it only takes its own.`, {
      hint: 'Reload the page and submit the form again.',
    });
  }
  const sent = body._csrf;
  // An empty expectation (no CSRF cookie at all) matches nothing, not an empty field.
  if (typeof sent !== 'string' || expected === '' || !sameSecret(sent, expected)) {
    throw new SvcError('forbidden', 'the form has no valid CSRF token, so it was not accepted.', {
      hint: 'Reload the page and submit the form again.',
    });
  }
}

/** The host of an `Origin` header; null for `null` (an opaque origin) and anything unparsable, which match no host. */
function hostOf(origin: string): string | null {
  try {
    return new URL(origin).host;
  } catch {
    return null;
  }
}

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
