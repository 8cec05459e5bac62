/**
 * Signing in and out. A sign-in link (`/login#<secret>`, from `svc server`'s
 * first start, `svc dashboard` or an invitation) works once: the page's script
 * posts the part after `#` (browsers never send it to the server), or a person
 * pastes the whole link into the form. The post carries a CSRF token bound to
 * a cookie of its own, so no other site can sign a browser in as someone else;
 * attempts are rate-limited per address.
 */
import { randomBytes } from 'node:crypto';
import { SvcError } from '../../../model/errors.js';
import { RateLimiter } from '../../api/rate-limit.js';
import { html } from '../html.js';
import { notice, page } from '../layout.js';
import { localPath, readForm, redirect, renderErrors, sendPage } from '../respond.js';
import { checkCsrf, LOGIN_CSRF_COOKIE, readViewer, SESSION_COOKIE, setCookie, type Context } from '../session-cookie.js';
import type { DashboardServices } from '../types.js';

const LOGIN_CSRF_MS = 60 * 60_000;

export function signInPages(services: DashboardServices) {
  const attempts = new RateLimiter({ burst: 10, perMinute: 10 });

  function form(ctx: Context, next: string, problem: string | null, status = 200): void {
    const csrf = randomBytes(24).toString('base64url');
    setCookie(ctx, services, LOGIN_CSRF_COOKIE, csrf, LOGIN_CSRF_MS);
    const signedOut = ctx.query.signed_out === '1';
    sendPage(
      ctx,
      page({
        title: 'Sign in',
        viewer: null,
        body: html`${signedOut ? notice('ok', 'You are signed out.') : ''}${problem === null ? '' : notice('error', problem)}
<form method="post" action="/login" id="sign-in" class="card">
  <input type="hidden" name="_csrf" value="${csrf}">
  <input type="hidden" name="next" value="${next}">
  <label for="link">Sign-in link</label>
  <input id="link" name="link" type="text" required autocomplete="off" spellcheck="false" placeholder="http://…/login#…">
  <p class="help">A sign-in link works once, for 15 minutes. Get a new one with <code>svc dashboard</code>, or ask an owner of your workspace for an invitation.</p>
  <button type="submit">Sign in</button>
</form>`,
      }),
      status,
    );
  }

  return {
    async show(ctx: Context): Promise<void> {
      if ((await readViewer(ctx, services)) !== null && ctx.query.signed_out === undefined) return redirect(ctx, localPath(ctx.query.next));
      form(ctx, localPath(ctx.query.next), null);
    },

    async signIn(ctx: Context): Promise<void> {
      const body = await readForm(ctx);
      const next = localPath(body.next);
      await renderErrors(ctx, null, async () => {
        checkCsrf(ctx, body, ctx.cookies.get(LOGIN_CSRF_COOKIE) ?? '');
        const wait = attempts.take(ctx.ip);
        if (wait > 0)
          throw new SvcError('rate_limited', `too many sign-in attempts from this address; wait ${wait} s.`, {
            headers: { 'Retry-After': String(wait) },
          });
        let account;
        try {
          account = await services.controlPlane.signIn.consume(secretOf(body.link));
        } catch (error) {
          if (error instanceof SvcError && error.code === 'unauthorized')
            return form(ctx, next, `${error.message}. ${error.hint ?? ''}`, 401);
          throw error;
        }
        const workspace = account.workspaces[0];
        if (workspace === undefined)
          throw new SvcError('forbidden', `the account ${account.name} may use no workspace, so it cannot sign in.`);
        if (account.joinedAt === null) await services.controlPlane.members.joined(account.id);
        const { secret } = await services.controlPlane.sessions.create(account.id, workspace);
        setCookie(ctx, services, SESSION_COOKIE, secret);
        setCookie(ctx, services, LOGIN_CSRF_COOKIE, null);
        redirect(ctx, next);
      });
    },

    async signOut(ctx: Context): Promise<void> {
      const body = await readForm(ctx);
      const viewer = await readViewer(ctx, services);
      await renderErrors(ctx, viewer, async () => {
        if (viewer !== null) {
          checkCsrf(ctx, body, viewer.session.csrf);
          await services.controlPlane.sessions.end(viewer.secret);
        }
        setCookie(ctx, services, SESSION_COOKIE, null);
        redirect(ctx, '/login?signed_out=1');
      });
    },
  };
}

/** The secret of a pasted link (`…/login#<secret>`) or of the bare secret. */
function secretOf(link: unknown): string {
  if (typeof link !== 'string') return '';
  const text = link.trim();
  const hash = text.lastIndexOf('#');
  return hash === -1 ? text : text.slice(hash + 1);
}
