/**
 * How dashboard pages answer: HTML with strict security headers, 303
 * redirects after a form, and failures as a page (not the API's JSON) with
 * the error's status, message and hint.
 */
import { type SvcError, toSvcError } from '../../model/errors.js';
import { checkDeclaredLength, readBody } from '../api/body.js';
import { html } from './html.js';
import { page } from './layout.js';
import type { Context } from './session-cookie.js';
import type { Viewer } from './types.js';

/** Nothing from elsewhere, no inline code, no framing. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export function securityHeaders(ctx: Context): void {
  ctx.set('Content-Security-Policy', CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
  // A page of an app on this same host that opens a dashboard page gets no handle on it.
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
  ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
  // Device codes (in /device?user_code=) must not leak to other sites through Referer. Not no-referrer:
  // then browsers post forms with `Origin: null`, which the CSRF check must refuse.
  ctx.set('Referrer-Policy', 'same-origin');
}

export function sendPage(ctx: Context, text: string, status = 200): void {
  securityHeaders(ctx);
  ctx.set('Cache-Control', 'no-store');
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = text;
}

/** 303 See Other: after a form, the browser GETs the next page. */
export function redirect(ctx: Context, location: string): void {
  securityHeaders(ctx);
  ctx.set('Cache-Control', 'no-store');
  ctx.status = 303;
  ctx.set('Location', location);
  ctx.body = '';
}

const HERE = 'http://svc.invalid';

/**
 * A path of this site to go on to after sign-in; anything else becomes the
 * dashboard. Parsed as a browser would (it drops tabs and newlines, reads
 * `\` as `/`), so `/\t/evil.example` cannot turn into another site.
 */
export function localPath(value: unknown): string {
  if (typeof value !== 'string' || !value.startsWith('/')) return '/dashboard';
  let url: URL;
  try {
    url = new URL(value, HERE);
  } catch {
    return '/dashboard';
  }
  const path = url.pathname + url.search;
  return url.origin === HERE && /^[\x21-\x7e]+$/.test(path) ? path : '/dashboard';
}

/** A form post's fields (a URL-encoded form or JSON), within the API's body limit. */
export async function readForm(ctx: Context): Promise<Record<string, unknown>> {
  checkDeclaredLength(ctx.req, ctx.res);
  return readBody(ctx.req, ctx.res, 'json-or-form');
}

/** Runs a page handler; an error becomes a page with its status, message and hint. */
export async function renderErrors(ctx: Context, viewer: Viewer | null, handler: () => Promise<void>): Promise<void> {
  try {
    await handler();
  } catch (thrown) {
    const error = toSvcError(thrown);
    if (!error.expose) throw thrown; // a bug: the gateway's writer reports it
    for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value); // Retry-After, Allow…
    sendPage(
      ctx,
      page({
        title: titleOf(error),
        viewer,
        body: html`<p role="alert">${error.message}</p>${error.hint ? html`<p>${error.hint}</p>` : ''}<p><a href="/dashboard">Back to the dashboard</a></p>`,
      }),
      error.status,
    );
  }
}

function titleOf(error: SvcError): string {
  if (error.status === 404) return 'Not found';
  if (error.status === 403) return 'Not allowed';
  if (error.status === 429) return 'Too many attempts';
  return 'Something is wrong';
}
