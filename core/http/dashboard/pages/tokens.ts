/**
 * Settings → Tokens: the workspace's access tokens. Create one (a name, an
 * optional expiry date); its secret is shown on the answer page once, with a
 * copy button, and never again. The list (name, creator, created, last
 * used, expiry) shows no secret. Revoking asks for
 * a confirmation first; a revoked token is refused from the next request on.
 */
import { SvcError } from '../../../model/errors.js';
import type { TokenInfo } from '../../../services/auth/token-records.js';
import { roleIn } from '../../../services/accounts/types.js';
import { html, type Html } from '../html.js';
import { confirmCard, csrfField, notice, onceField, page } from '../layout.js';
import { readForm, redirect, renderErrors, sendPage } from '../respond.js';
import { checkCsrf, type Context } from '../session-cookie.js';
import type { DashboardServices, Viewer } from '../types.js';
import { claimOnce, signedIn } from '../viewer.js';

const TOKENS = '/dashboard/settings/tokens';

/** The tokens page: the form for a new one, and the list; `top` above them (a notice, the token just created). */
async function listPage(services: DashboardServices, ctx: Context, viewer: Viewer, top: Html | null, status = 200): Promise<void> {
  const { tokens } = services.controlPlane;
  const list = await tokens.list(viewer.principal);
  const names = await accountNames(services, list);
  sendPage(
    ctx,
    page({
      title: 'Tokens',
      section: 'tokens',
      viewer,
      body: html`${top ?? ''}
<section aria-labelledby="new-token" class="card">
  <h2 id="new-token">New token</h2>
  <form method="post" action="${TOKENS}">
    ${csrfField(viewer)}${onceField()}
    <label for="token-name">Name</label>
    <input id="token-name" name="name" type="text" maxlength="100" placeholder="ci" autocomplete="off">
    <label for="token-expires">Expires on (optional)</label>
    <input id="token-expires" name="expires" type="date">
    <p class="help">A token acts as you in workspace ${viewer.session.workspace}: <code>Authorization: Bearer &lt;token&gt;</code>, or <code>SVC_TOKEN</code> for the CLI.</p>
    <button type="submit">Create token</button>
  </form>
</section>
<section aria-labelledby="token-list">
  <h2 id="token-list">Tokens of ${viewer.session.workspace}</h2>
  ${
    list.length === 0
      ? html`<p>No tokens yet.</p>`
      : html`<div class="scroll"><table>
    <thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Created by</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${list.map(
      (token) => html`<tr>
      <td>${token.name ?? '(no name)'}</td><td><code>${token.id}</code></td><td>${names.get(token.createdBy) ?? token.createdBy}</td>
      <td>${time(token.createdAt)}</td><td>${token.lastUsedAt === null ? 'never' : time(token.lastUsedAt)}</td><td>${token.expiresAt === null ? 'never' : time(token.expiresAt)}</td>
      <td><a href="${TOKENS}/${token.id}/revoke">Revoke<span class="visually-hidden"> ${token.name ?? token.id}</span></a></td>
    </tr>`,
    )}</tbody>
  </table></div>`
  }
</section>`,
    }),
    status,
  );
}

/** The names of the accounts that created the tokens, by account id (an account gone is left out). */
async function accountNames(services: DashboardServices, list: readonly TokenInfo[]): Promise<Map<string, string>> {
  const { accounts } = services.controlPlane;
  const names = new Map<string, string>();
  for (const id of new Set(list.map((token) => token.createdBy))) {
    const account = await accounts.get(id).catch(() => null);
    if (account !== null) names.set(id, account.name);
  }
  return names;
}

export function tokenPages(services: DashboardServices) {
  const { tokens } = services.controlPlane;

  return {
    async list(ctx: Context): Promise<void> {
      const viewer = await signedIn(ctx, services);
      if (viewer === null) return;
      const revoked = ctx.query.revoked;
      await renderErrors(ctx, viewer, () =>
        listPage(
          services,
          ctx,
          viewer,
          typeof revoked === 'string' ? notice('ok', `Token ${revoked} is revoked: it is refused from now on.`) : null,
        ),
      );
    },

    create: (ctx: Context) => createToken(services, ctx),

    async confirmRevoke(ctx: Context & { params: Record<string, string> }): Promise<void> {
      const viewer = await signedIn(ctx, services);
      if (viewer === null) return;
      await renderErrors(ctx, viewer, async () => {
        const token = (await tokens.list(viewer.principal)).find((t) => t.id === ctx.params.id);
        if (token === undefined)
          throw new SvcError('not_found', `workspace ${viewer.session.workspace} has no token ${ctx.params.id}.`, {
            hint: 'It may have been revoked already.',
          });
        sendPage(
          ctx,
          page({
            title: 'Revoke a token',
            section: 'tokens',
            viewer,
            body: confirmCard(
              viewer,
              html`Revoke <strong>${token.name ?? token.id}</strong> (<code>${token.id}</code>)? Everything that uses it is refused from the next request on. This cannot be undone.`,
              `${TOKENS}/${token.id}/revoke`,
              `Revoke ${token.name ?? token.id}`,
              TOKENS,
            ),
          }),
        );
      });
    },

    async revoke(ctx: Context & { params: Record<string, string> }): Promise<void> {
      const body = await readForm(ctx);
      const viewer = await signedIn(ctx, services);
      if (viewer === null) return;
      await renderErrors(ctx, viewer, async () => {
        checkCsrf(ctx, body, viewer.session.csrf);
        const token = await tokens.revoke(ctx.params.id, viewer.principal, roleIn(viewer.account, viewer.session.workspace));
        redirect(ctx, `${TOKENS}?revoked=${encodeURIComponent(token.name ?? token.id)}`);
      });
    },
  };
}

/** Makes a token from the form and shows its secret, once; a refused or repeated form is said above the list. */
async function createToken(services: DashboardServices, ctx: Context): Promise<void> {
  const { tokens } = services.controlPlane;
  const body = await readForm(ctx);
  const viewer = await signedIn(ctx, services);
  if (viewer === null) return;
  await renderErrors(ctx, viewer, async () => {
    checkCsrf(ctx, body, viewer.session.csrf);
    // An empty field is no name; anything else goes to the token service, which says what is wrong with it.
    const name = typeof body.name === 'string' ? (body.name.trim() === '' ? undefined : body.name.trim()) : body.name;
    let created;
    try {
      await claimOnce(services, viewer, body);
      created = await tokens.create({ name, expiresAt: expiryOf(body.expires) }, viewer.principal);
    } catch (error) {
      if (!(error instanceof SvcError) || (error.status !== 400 && error.status !== 409)) throw error;
      const said =
        error.status === 409
          ? 'This form was sent before, so no second token was made. The token it made was shown once, when it was created.'
          : `${error.message}${error.hint ? ` ${error.hint}` : ''}`;
      return listPage(services, ctx, viewer, notice('error', said), error.status);
    }
    await listPage(
      services,
      ctx,
      viewer,
      html`<section class="card created" aria-labelledby="created-title">
  <h2 id="created-title">Token ${created.token.name ?? created.token.id} created</h2>
  <p role="status">Copy the token now: it is shown this once and never again.</p>
  <label for="secret">Token</label>
  <div class="copy-row"><input id="secret" type="text" readonly value="${created.secret}" spellcheck="false"><button type="button" data-copy="secret" hidden>Copy</button></div>
</section>`,
    );
  });
}

/** `YYYY-MM-DD` from a date field → the end of that day (UTC), as the token service takes it; empty → no expiry. */
function expiryOf(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const day = value.trim();
  // Round-tripped, so that 2030-02-30 is refused rather than read as 2 March.
  const parsed = Date.parse(`${day}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(parsed) || new Date(parsed).toISOString().slice(0, 10) !== day) {
    throw new SvcError('bad_request', `the expiry date ${JSON.stringify(value)} is not a date like 2030-01-31.`);
  }
  return `${day}T23:59:59.000Z`;
}

function time(iso: string): Html {
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}
