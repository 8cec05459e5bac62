/**
 * Settings → Secrets: the workspace's secrets by name, with their keys and
 * who changed them when; create one from KEY=VALUE lines (read as a dotenv
 * file, by the `dotenv` package), delete one after a confirmation. No page
 * ever renders a value: a refused form comes back empty, with the reason.
 */
import { parse as parseDotenv } from 'dotenv';
import { SvcError } from '../../../model/errors.js';
import { secretNotFound } from '../../../services/secrets/secrets.js';
import type { SecretView } from '../../../services/secrets/types.js';
import { html, type Html } from '../html.js';
import { confirmCard, csrfField, notice, page } from '../layout.js';
import { readForm, redirect, renderErrors, sendPage } from '../respond.js';
import { checkCsrf, type Context } from '../session-cookie.js';
import type { DashboardServices, Viewer } from '../types.js';
import { signedIn } from '../viewer.js';

const SECRETS = '/dashboard/settings/secrets';

/** The secrets page: the form for a new one, and the list; `top` above them (a notice). */
async function listPage(services: DashboardServices, ctx: Context, viewer: Viewer, top: Html | null, status = 200): Promise<void> {
  const { secrets } = services.controlPlane;
  const list = await secrets.list(viewer.principal.workspace);
  sendPage(
    ctx,
    page({
      title: 'Secrets',
      section: 'secrets',
      viewer,
      body: html`${top ?? ''}
<section aria-labelledby="new-secret" class="card">
  <h2 id="new-secret">New secret</h2>
  <form method="post" action="${SECRETS}" autocomplete="off">
    ${csrfField(viewer)}
    <label for="secret-name">Name</label>
    <input id="secret-name" name="name" type="text" maxlength="63" placeholder="db" required spellcheck="false">
    <label for="secret-values">Values, one <code>KEY=VALUE</code> a line (dotenv format)</label>
    <textarea id="secret-values" name="values" rows="5" required spellcheck="false" placeholder="DATABASE_URL=postgres://app@db/app"></textarea>
    <p class="help">Workloads with <code>secrets=[svc.Secret.from_name("db")]</code> get these keys as environment variables. Values are stored sealed and never shown again, here or anywhere.</p>
    <button type="submit">Create secret</button>
  </form>
</section>
<section aria-labelledby="secret-list">
  <h2 id="secret-list">Secrets of ${viewer.session.workspace}</h2>
  ${list.length === 0 ? html`<p>No secrets yet.</p>` : secretTable(list)}
</section>`,
    }),
    status,
  );
}

export function secretPages(services: DashboardServices) {
  const { secrets } = services.controlPlane;

  return {
    async list(ctx: Context): Promise<void> {
      const viewer = await signedIn(ctx, services);
      if (viewer === null) return;
      const deleted = ctx.query.deleted;
      await renderErrors(ctx, viewer, () =>
        listPage(services, ctx, viewer, typeof deleted === 'string' ? notice('ok', `The secret ${deleted} is deleted.`) : null),
      );
    },

    async create(ctx: Context): Promise<void> {
      const body = await readForm(ctx);
      const viewer = await signedIn(ctx, services);
      if (viewer === null) return;
      await renderErrors(ctx, viewer, async () => {
        checkCsrf(ctx, body, viewer.session.csrf);
        const name = typeof body.name === 'string' ? body.name.trim() : body.name;
        let created: SecretView;
        try {
          const values = typeof body.values === 'string' ? parseDotenv(body.values) : body.values;
          created = await secrets.create(viewer.principal.workspace, name as string, values, viewer.principal);
        } catch (error) {
          if (!(error instanceof SvcError) || error.status >= 500) throw error;
          // The form comes back empty: what was typed is never rendered back.
          return listPage(services, ctx, viewer, notice('error', `${error.message}${error.hint ? ` ${error.hint}` : ''}`), error.status);
        }
        await listPage(
          services,
          ctx,
          viewer,
          notice('ok', `The secret ${created.name} is stored with ${created.keys.length} key${created.keys.length === 1 ? '' : 's'}.`),
          201,
        );
      });
    },

    async confirmDelete(ctx: Context & { params: Record<string, string> }): Promise<void> {
      const viewer = await signedIn(ctx, services);
      if (viewer === null) return;
      await renderErrors(ctx, viewer, async () => {
        const secret = await secrets.get(viewer.principal.workspace, ctx.params.name!);
        if (secret === null) throw secretNotFound(viewer.principal.workspace, [ctx.params.name!]);
        sendPage(
          ctx,
          page({
            title: 'Delete a secret',
            section: 'secrets',
            viewer,
            body: confirmCard(
              viewer,
              html`Delete the secret <strong>${secret.name}</strong> (${secret.keys.join(', ')})? Running workloads keep the values they started with; deploys that name it are refused until it exists again. This cannot be undone.`,
              `${SECRETS}/${secret.name}/delete`,
              `Delete ${secret.name}`,
              SECRETS,
            ),
          }),
        );
      });
    },

    async delete(ctx: Context & { params: Record<string, string> }): Promise<void> {
      const body = await readForm(ctx);
      const viewer = await signedIn(ctx, services);
      if (viewer === null) return;
      await renderErrors(ctx, viewer, async () => {
        checkCsrf(ctx, body, viewer.session.csrf);
        await secrets.delete(viewer.principal.workspace, ctx.params.name!);
        redirect(ctx, `${SECRETS}?deleted=${encodeURIComponent(ctx.params.name!)}`);
      });
    },
  };
}

function secretTable(list: readonly SecretView[]): Html {
  return html`<div class="scroll"><table>
    <thead><tr><th scope="col">Name</th><th scope="col">Keys</th><th scope="col">Updated</th><th scope="col">By</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${list.map(
      (secret) => html`<tr>
      <td><code>${secret.name}</code></td><td>${secret.keys.map((key, i) => html`${i === 0 ? '' : ', '}<code>${key}</code>`)}</td>
      <td><time datetime="${secret.updatedAt}">${secret.updatedAt.slice(0, 16).replace('T', ' ')} UTC</time></td><td>${secret.updatedBy ?? '-'}</td>
      <td><a href="${SECRETS}/${secret.name}/delete">Delete<span class="visually-hidden"> ${secret.name}</span></a></td>
    </tr>`,
    )}</tbody>
  </table></div>`;
}
