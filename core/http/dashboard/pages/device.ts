/**
 * `/device`: where `svc login` sends a person (its verification_uri, with the
 * code filled in). The page shows the code, the client's name and the
 * workspace the new token will act in; the person checks the code against
 * the terminal and approves or denies. Unknown, expired and decided codes are
 * explained, never approved.
 */
import { SvcError } from '../../../model/errors.js';
import { html, type Html } from '../html.js';
import { csrfField, notice, page } from '../layout.js';
import { readForm, renderErrors, sendPage } from '../respond.js';
import { checkCsrf, type Context } from '../session-cookie.js';
import type { DashboardServices, Viewer } from '../types.js';
import { signedIn } from '../viewer.js';

export function devicePages(services: DashboardServices) {
  const { devices } = services.controlPlane;

  return {
    async show(ctx: Context): Promise<void> {
      const viewer = await signedIn(ctx, services);
      if (viewer === null) return;
      await renderErrors(ctx, viewer, async () => {
        const code = ctx.query.user_code;
        if (typeof code !== 'string' || code.trim() === '') return show(ctx, viewer, codeForm(viewer, null));
        let pending;
        try {
          pending = await devices.pending(code);
        } catch (error) {
          const explained = unusable(error);
          if (explained === null) throw error;
          return show(ctx, viewer, codeForm(viewer, explained), (error as SvcError).status);
        }
        show(
          ctx,
          viewer,
          html`<div class="card">
  <p>A program asks to act as <strong>${viewer.account.name}</strong> in workspace <strong>${viewer.session.workspace}</strong>.</p>
  <dl class="facts">
    <dt>Code</dt><dd class="code" id="user-code">${pending.userCode}</dd>
    <dt>Client</dt><dd>${pending.clientName}</dd>
    <dt>Workspace</dt><dd>${viewer.session.workspace}</dd>
    <dt>Expires</dt><dd><time datetime="${pending.expiresAt}">${pending.expiresAt}</time></dd>
  </dl>
  <p>Check that the code matches the one in your terminal. Approve only a sign-in you started yourself.</p>
  <form method="post" action="/device" class="actions">
    ${csrfField(viewer)}
    <input type="hidden" name="user_code" value="${pending.userCode}">
    <button type="submit" name="decision" value="approve">Approve</button>
    <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
  </form>
</div>`,
        );
      });
    },

    async decide(ctx: Context): Promise<void> {
      const body = await readForm(ctx);
      const viewer = await signedIn(ctx, services);
      if (viewer === null) return;
      await renderErrors(ctx, viewer, async () => {
        checkCsrf(ctx, body, viewer.session.csrf);
        const code = body.user_code;
        const decision = body.decision;
        if (decision !== 'approve' && decision !== 'deny') throw new SvcError('bad_request', 'choose Approve or Deny.');
        try {
          if (decision === 'approve') await devices.approve(code, viewer.principal, viewer.session.workspace);
          else await devices.deny(code);
        } catch (error) {
          const explained = unusable(error);
          if (explained === null) throw error;
          return show(ctx, viewer, codeForm(viewer, explained), (error as SvcError).status);
        }
        show(
          ctx,
          viewer,
          decision === 'approve'
            ? notice(
                'ok',
                html`Approved. <code>svc login</code> in your terminal is signed in to workspace ${viewer.session.workspace} now; you can close this page.`,
              )
            : notice('ok', html`Denied. The program that asked gets no token.`),
        );
      });
    },
  };
}

/** The page of the device sign-in around `body`. */
function show(ctx: Context, viewer: Viewer, body: Html, status = 200): void {
  sendPage(ctx, page({ title: 'Approve a sign-in', viewer, body }), status);
}

/** The form asking for the code, below `problem` when the last one could not be used. */
function codeForm(viewer: Viewer, problem: Html | null): Html {
  return html`${problem ?? ''}<form method="get" action="/device" class="card">
  <label for="user_code">The code your terminal shows</label>
  <input id="user_code" name="user_code" type="text" required autocomplete="off" spellcheck="false" placeholder="XXXX-XXXX" autocapitalize="characters">
  <button type="submit">Continue</button>
</form>
<p class="help">Signed in as ${viewer.account.name} in workspace ${viewer.session.workspace}.</p>`;
}

/** The explanation of a code that cannot be decided, or null for any other error. */
function unusable(error: unknown): Html | null {
  if (!(error instanceof SvcError)) return null;
  if (error.code === 'not_found') return notice('error', html`${error.message}. Run <code>svc login</code> again and use its new code.`);
  if (error.code === 'conflict')
    return notice('error', html`${error.message}. Nothing more to do here; run <code>svc login</code> again for a new sign-in.`);
  if (error.code === 'bad_request') return notice('error', `${error.message}. Type the code as your terminal shows it, like ABCD-EFGH.`);
  return null;
}
