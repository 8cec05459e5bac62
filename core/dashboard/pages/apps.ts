/**
 * Apps: every deployed app of the viewer's workspace, each workload with its
 * kind, status, version, stable URL (with a copy button) and containers.
 */
import { describeApp, type AppView } from '../../api/app-view.js';
import { html } from '../html.js';
import { page } from '../layout.js';
import { redirect, renderErrors, sendPage } from '../respond.js';
import { readViewer, type Context } from '../session-cookie.js';
import type { DashboardServices } from '../types.js';

export function appPages(services: DashboardServices) {
  return {
    async list(ctx: Context): Promise<void> {
      const viewer = await readViewer(ctx, services);
      if (viewer === null) return redirect(ctx, `/login?next=${encodeURIComponent(ctx.path)}`);
      await renderErrors(ctx, viewer, async () => {
        const mine = services.deployments.list().filter((d) => d.ref.workspace === viewer.session.workspace && d.ref.stage === 'deployed');
        const apps: AppView[] = await Promise.all(mine.map((deployment) => describeApp(deployment, services)));
        apps.sort((a, b) => a.name.localeCompare(b.name));
        sendPage(ctx, page({
          title: 'Apps',
          section: 'apps',
          viewer,
          body: apps.length === 0
            ? html`<p>No app is deployed in ${viewer.session.workspace} yet. Deploy one with <code>svc deploy app.py</code>.</p>`
            : html`${apps.map((app) => html`<section class="card" aria-labelledby="app-${app.name}">
  <h2 id="app-${app.name}">${app.name}${app.paused ? html` <span class="badge">paused</span>` : ''}</h2>
  <div class="scroll"><table>
    <thead><tr><th scope="col">Workload</th><th scope="col">Kind</th><th scope="col">Status</th><th scope="col">Version</th><th scope="col">Containers</th><th scope="col">URL</th></tr></thead>
    <tbody>${app.deployments.map((d) => html`<tr>
      <td>${d.workload}</td><td>${d.kind}</td><td><span class="status ${d.status}">${d.status}</span></td><td>v${d.version}</td>
      <td>${d.containers.ready} running${d.containers.starting > 0 ? html`, ${d.containers.starting} starting` : ''}</td>
      <td>${d.urls.path === null ? '—' : html`<code id="url-${app.name}-${d.workload}">${d.urls.path}</code> <button type="button" data-copy="url-${app.name}-${d.workload}" hidden>Copy</button>`}</td>
    </tr>`)}</tbody>
  </table></div>
</section>`)}`,
        }));
      });
    },
  };
}
