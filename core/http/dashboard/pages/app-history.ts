/**
 * An app's History tab: every version kept of each workload (when, by whom, what it changed; the one
 * running marked), each earlier version with a Rollback action that asks first on a page of its own,
 * as `svc app rollback <app> <version>` does without asking.
 */
import { appHistory, type HistoryEntry } from '../../../services/deployments/history.js';
import { SvcError } from '../../../model/errors.js';
import { appRef, requireApp } from '../../api/apps.js';
import { deploymentRecords } from '../../api/app-view.js';
import { html, type Html } from '../html.js';
import { csrfField, page } from '../layout.js';
import { readForm, redirect, renderErrors, sendPage } from '../respond.js';
import { checkCsrf, type Context } from '../session-cookie.js';
import type { DashboardServices } from '../types.js';
import { signedIn } from '../viewer.js';

type Params = Context & { params: Record<string, string> };

export function appHistoryPages(services: DashboardServices) {
  return {
    async history(ctx: Params): Promise<void> {
      const viewer = await signedIn(ctx, services);
      if (viewer === null) return;
      await renderErrors(ctx, viewer, async () => {
        const { ref } = requireApp(ctx.params, viewer.principal, services);
        const versions = appHistory(await deploymentRecords(services).deployments(ref.workspace, ref.app));
        sendPage(
          ctx,
          page({
            title: `History of ${ref.app}`,
            section: 'apps',
            viewer,
            body: html`<p><a href="/dashboard/apps/${ref.app}">← ${ref.app}</a></p>
${versions.length === 0 ? html`<p>No version is kept.</p>` : historyTable(ref.app, versions)}
<p class="help">svc keeps the last 10 versions of each workload. A rollback starts the earlier version's containers, then switches the URL to them: no request fails. <code>svc app rollback ${ref.app} [version]</code> does the same.</p>`,
          }),
        );
      });
    },

    async confirmRollback(ctx: Params): Promise<void> {
      const viewer = await signedIn(ctx, services);
      if (viewer === null) return;
      await renderErrors(ctx, viewer, async () => {
        const { ref } = requireApp(ctx.params, viewer.principal, services);
        const version = versionParam(ctx);
        sendPage(
          ctx,
          page({
            title: `Roll ${ref.app} back to v${version}?`,
            section: 'apps',
            viewer,
            body: html`<div class="card"><p>Each workload of ${ref.app} that keeps v${version} runs it again, from that version's code and image. The versions it replaces drain.</p>
  <form method="post" action="${ctx.path}" class="actions">
    ${csrfField(viewer)}
    <button type="submit">Roll ${ref.app} back to v${version}</button>
    <a href="/dashboard/apps/${ref.app}/history">Cancel</a>
  </form></div>`,
          }),
        );
      });
    },

    async rollback(ctx: Params): Promise<void> {
      const body = await readForm(ctx);
      const viewer = await signedIn(ctx, services);
      if (viewer === null) return;
      await renderErrors(ctx, viewer, async () => {
        checkCsrf(ctx, body, viewer.session.csrf);
        const version = versionParam(ctx);
        await services.deployments.rollback(appRef(ctx.params, viewer.principal), version);
        redirect(ctx, `/dashboard/apps/${ctx.params.app}?done=${encodeURIComponent(`${ctx.params.app} rolled back to v${version}`)}`);
      });
    },
  };
}

function versionParam(ctx: Params): number {
  const text = ctx.params.version ?? '';
  if (!/^[1-9]\d{0,8}$/.test(text)) throw new SvcError('not_found', `there is no version ${JSON.stringify(text)} here.`);
  return Number(text);
}

function historyTable(app: string, versions: readonly HistoryEntry[]): Html {
  return html`<div class="scroll"><table>
  <thead><tr><th scope="col">Version</th><th scope="col">Workload</th><th scope="col">Deployed</th><th scope="col">By</th><th scope="col">Changed</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${versions.map(
    (v) => html`<tr>
    <th scope="row">v${v.version}${v.current ? html` <span class="badge">running</span>` : ''}</th>
    <td>${v.workload}</td>
    <td><time datetime="${v.createdAt}">${v.createdAt.slice(0, 16).replace('T', ' ')} UTC</time></td>
    <td>${v.createdBy ?? '—'}</td>
    <td>${v.changes.join(', ')}</td>
    <td class="actions">${v.current ? '' : html`<a href="/dashboard/apps/${app}/history/${v.version}/rollback">Roll back to v${v.version}<span class="visually-hidden"> (${v.workload})</span></a>`}</td>
  </tr>`,
  )}</tbody>
</table></div>`;
}
