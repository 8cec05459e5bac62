/**
 * The cookies that are svc's own (the dashboard's session and its sign-in
 * form's CSRF cookie). A browser sends them with every request to the
 * server's host, workload URLs included; the gateway takes them out of what
 * it forwards, so no workload, whoever deployed it, ever sees a session.
 */
export const SESSION_COOKIE = 'svc_session';
export const LOGIN_CSRF_COOKIE = 'svc_login_csrf';
const PLATFORM_COOKIES = new Set([SESSION_COOKIE, LOGIN_CSRF_COOKIE]);

/** A `Cookie` header without svc's own cookies (`''` when nothing else is left). */
export function withoutPlatformCookies(header: string): string {
  if (!header.includes('svc_')) return header; // the common case: nothing to take out
  return header
    .split(';')
    .filter((pair) => !PLATFORM_COOKIES.has(pair.split('=', 1)[0]!.trim()))
    .map((pair) => pair.trim())
    .join('; ');
}
