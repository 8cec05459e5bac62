/**
 * The browser's side of a dashboard session: the `svc_session` cookie
 * (HttpOnly, SameSite=Lax, Secure when the browser came over HTTPS, path /),
 * who it signs in, and the CSRF check of every state-changing form.
 */
import { timingSafeEqual } from 'node:crypto';
import type { ParameterizedContext } from 'koa';
import { SvcError } from '../errors.js';
import type { GatewayState } from '../gateway/types.js';
import { SESSION_MAX_MS } from '../accounts/sessions.js';
import type { DashboardServices, Viewer } from './types.js';

export type Context = ParameterizedContext<GatewayState>;

export const SESSION_COOKIE = 'svc_session';

/** HTTPS as the browser sees it: TLS here, or the configured public URL (a proxy that terminates TLS in front). */
export function cameOverHttps(ctx: Context, services: Pick<DashboardServices, "publicUrl">): boolean {
  return ctx.secure || (services.publicUrl?.startsWith('https:') ?? false);
}

export function setCookie(ctx: Context, services: Pick<DashboardServices, "publicUrl">, name: string, value: string | null, maxAgeMs = SESSION_MAX_MS): void {
  const secure = cameOverHttps(ctx, services);
  // The cookies library refuses Secure on a plain connection; behind a TLS proxy the browser's side is HTTPS.
  ctx.cookies.secure = secure;
  ctx.cookies.set(name, value, { httpOnly: true, sameSite: 'lax', secure, path: '/', overwrite: true, ...(value === null ? {} : { maxAge: maxAgeMs }) });
}

/** Who the request's session cookie signs in, or null. A session whose account or workspace is gone is ended. */
export async function readViewer(ctx: Context, services: DashboardServices): Promise<Viewer | null> {
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
    throw new SvcError('forbidden', `a form of this dashboard was posted from ${origin}; it only takes its own.`, { hint: 'Reload the page and submit the form again.' });
  }
  const sent = body['_csrf'];
  if (typeof sent !== 'string' || !sameSecret(sent, expected)) {
    throw new SvcError('forbidden', 'the form has no valid CSRF token, so it was not accepted.', { hint: 'Reload the page and submit the form again.' });
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
