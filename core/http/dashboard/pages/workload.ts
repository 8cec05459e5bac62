/**
 * One workload: what the Apps page says of it (workload-view.ts), and the
 * charts of its last hour (workload-charts.ts), which the page's script
 * refreshes by asking again for `/charts` (the charts alone, as HTML).
 * Looked up in the viewer's workspace: another workspace's workload is not found.
 */
import { describeApp } from '../../api/app-view.js';
import { requireApp } from '../../api/apps.js';
import type { Deployment, DeployedWorkload } from '../../../services/deployments/types.js';
import { hourKey } from '../../../infra/metrics/last-hour.js';
import { SvcError } from '../../../model/errors.js';
import { html, type Html } from '../html.js';
import { page } from '../layout.js';
import { renderErrors, securityHeaders, sendPage } from '../respond.js';
import { checkCsrf, readViewer, type Context } from '../session-cookie.js';
import type { DashboardServices, Viewer } from '../types.js';
import { signedIn } from '../viewer.js';
import { workloadCharts } from '../workload-charts.js';
import { workloadView, type WorkloadView } from '../workload-view.js';

type Params = Context & { params: Record<string, string> };

/** How often the page asks for its charts again (the current minute's point moves; a new one comes each minute). */
export const CHARTS_REFRESH_MS = 10_000;

export function workloadPages(services: DashboardServices) {
  return {
    async show(ctx: Params): Promise<void> {
      const viewer = await signedIn(ctx, services);
      if (viewer === null) return;
      await renderErrors(ctx, viewer, async () => {
        const { deployment, workload } = requireWorkload(services, ctx, viewer);
        const app = deployment.ref.app;
        const described = await describeApp(deployment, services);
        const view = workloadView(
          deployment,
          workload,
          described.deployments.find((d) => d.workload === workload.name),
          services,
        );
        const live = `${ctx.path}/charts?csrf=${encodeURIComponent(viewer.session.csrf)}`;
        sendPage(
          ctx,
          page({
            title: `Workload ${workload.name} of ${app}`,
            section: 'apps',
            viewer,
            body: html`<p><a href="/dashboard/apps/${app}">← ${app}</a> · <a href="${ctx.path}/logs">Logs<span class="visually-hidden"> of ${workload.name}</span></a></p>
${facts(view)}
<section class="card" aria-labelledby="last-hour">
  <h2 id="last-hour">The last hour</h2>
  ${workload.status === 'not_served' ? html`<p class="help">Called with <code>.remote()</code>, it has no URL: its calls do not pass the gateway, which counts what these charts show.</p>` : ''}
  <p class="help" id="charts-state" role="status">One point a minute, as this server counted them; reload for newer ones.</p>
  <div id="charts" data-live="${live}" data-every="${CHARTS_REFRESH_MS}">${chartsOf(services, deployment, workload)}</div>
</section>`,
          }),
        );
      });
    },

    /** The charts alone, for the page's script; the session's CSRF token in the URL says it is the dashboard's own. */
    async charts(ctx: Params): Promise<void> {
      const viewer = await readViewer(ctx, services, { subresource: true });
      if (viewer === null) throw new SvcError('unauthorized', "sign in to follow the charts: open the workload's page of the dashboard.");
      checkCsrf(ctx, { _csrf: ctx.query.csrf }, viewer.session.csrf);
      const { deployment, workload } = requireWorkload(services, ctx, viewer);
      securityHeaders(ctx);
      ctx.set('Cache-Control', 'no-store');
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = chartsOf(services, deployment, workload).text;
    },
  };
}

function requireWorkload(services: DashboardServices, ctx: Params, viewer: Viewer): { deployment: Deployment; workload: DeployedWorkload } {
  const deployment = requireApp(ctx.params, viewer.principal, services);
  const workload = deployment.workloads.find((w) => w.name === ctx.params.workload);
  if (workload === undefined) throw new SvcError('not_found', `the app ${deployment.ref.app} has no workload ${ctx.params.workload}.`);
  return { deployment, workload };
}

function chartsOf(services: DashboardServices, deployment: Deployment, workload: DeployedWorkload): Html {
  return workloadCharts(services.lastHour.read(hourKey(deployment.ref, workload.name)));
}

function facts(view: WorkloadView): Html {
  return html`<dl class="facts card">
  <dt>Kind</dt><dd>${view.kind}</dd>
  <dt>Status</dt><dd><span class="status ${view.tone}">${view.status}</span></dd>
  <dt>Version</dt><dd>v${view.version}${view.deployedAt === null ? '' : html`, deployed <time datetime="${view.deployedAt}">${view.deployedAt.slice(0, 16).replace('T', ' ')} UTC</time>`}</dd>
  <dt>Containers</dt><dd>${view.running} of at most ${view.maxContainers}${view.starting > 0 ? `, ${view.starting} starting` : ''}</dd>
  ${view.gpu === null ? '' : html`<dt>GPUs</dt><dd><code>${view.gpu}</code> per container</dd>`}
  ${view.gpuNow === null ? '' : html`<dt>GPUs now</dt><dd>${view.gpuNow}</dd>`}
  <dt>Requests</dt><dd>${view.inFlight} in flight, ${view.queued} queued</dd>
  <dt>URL</dt><dd>${view.url === null ? '—' : html`<code>${view.url}</code>`}</dd>
</dl>`;
}
