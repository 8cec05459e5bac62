/**
 * Apps: every deployed app of the viewer's workspace with its workloads
 * (workload-view.ts; each links to its page, workload.ts) and a link to its calls (calls.ts), each workload's live logs, and the actions pause and
 * resume (the app), stop and delete (a workload), each confirmed on a page of
 * its own before anything changes.
 */
import { describeApp } from '../../api/app-view.js';
import { appRef, requireApp } from '../../api/apps.js';
import type { Readable } from 'node:stream';
import { logsAnswer } from '../../api/deployment-logs.js';
import type { Deployment } from '../../../services/deployments/types.js';
import { SvcError } from '../../../model/errors.js';
import { html, type Html } from '../html.js';
import { csrfField, notice, page } from '../layout.js';
import { readForm, redirect, renderErrors, securityHeaders, sendPage } from '../respond.js';
import { checkCsrf, readViewer, type Context } from '../session-cookie.js';
import type { DashboardServices, Viewer } from '../types.js';
import { signedIn } from '../viewer.js';
import { workloadView, type WorkloadView } from '../workload-view.js';
import { scheduledRunOf, scheduledRunsOf } from '../../api/app-runs.js';
import { scheduledRunLogs, scheduledRunsCard } from '../scheduled-runs-card.js';

type Params = Context & { params: Record<string, string> };

/** What each action does, for its confirmation page and its notice. */
const ACTIONS = {
  pause: {
    what: 'Pause',
    scope: 'app',
    effect: 'Every workload of the app stops; its URLs answer 503 app_paused until you resume it.',
    done: 'paused',
  },
  resume: { what: 'Resume', scope: 'app', effect: 'Every workload starts again at the version it had.', done: 'resumed' },
  rollover: {
    what: 'Roll over',
    scope: 'app',
    effect: 'Every running workload gets fresh containers at the version it runs; the old ones drain. No request fails.',
    done: 'rolled over',
  },
  stop: {
    what: 'Stop',
    scope: 'workload',
    effect: 'Its containers stop and its URL answers 503 until it is deployed again.',
    done: 'stopped',
  },
  delete: {
    what: 'Delete',
    scope: 'workload',
    effect: 'It is removed with its versions and logs; its URL is free. This cannot be undone.',
    done: 'deleted',
  },
} as const;
type Action = keyof typeof ACTIONS;

/** How often an open log stream checks that its session still holds (signed out, removed: the stream ends). */
export const LOG_SESSION_CHECK_MS = 5_000;

export function appPages(services: DashboardServices) {
  return {
    list: (ctx: Context) => listApps(services, ctx),

    show: (ctx: Params) => showApp(services, ctx),

    async scheduledRun(ctx: Params): Promise<void> {
      const viewer = await signedIn(ctx, services);
      if (viewer === null) return;
      await renderErrors(ctx, viewer, async () => {
        const deployment = requireApp(ctx.params, viewer.principal, services);
        const run = await scheduledRunOf(services, deployment, ctx.params.id!);
        sendPage(
          ctx,
          page({ title: `Scheduled run of ${run.function}`, section: 'apps', viewer, body: scheduledRunLogs(deployment.ref.app, run) }),
        );
      });
    },

    logs: (ctx: Params) => workloadLogs(services, ctx),

    logEvents: (ctx: Params) => logEvents(services, ctx),
    confirmApp: (ctx: Params) => confirm(services, ctx, 'app'),
    confirmWorkload: (ctx: Params) => confirm(services, ctx, 'workload'),
    actApp: (ctx: Params) => act(services, ctx, 'app'),
    actWorkload: (ctx: Params) => act(services, ctx, 'workload'),
  };
}

/** The apps deployed in the viewer's workspace, each with its workloads. */
async function listApps(services: DashboardServices, ctx: Context): Promise<void> {
  const viewer = await signedIn(ctx, services);
  if (viewer === null) return;
  await renderErrors(ctx, viewer, async () => {
    const mine = services.deployments.list().filter((d) => d.ref.workspace === viewer.session.workspace && d.ref.stage === 'deployed');
    mine.sort((a, b) => a.ref.app.localeCompare(b.ref.app));
    const sections = await Promise.all(
      mine.map(
        async (deployment) => html`<section class="card" aria-labelledby="app-${deployment.ref.app}">
  <h2 id="app-${deployment.ref.app}"><a href="/dashboard/apps/${deployment.ref.app}">${deployment.ref.app}</a>${deployment.paused ? html` <span class="badge">paused</span>` : ''}</h2>
  <p><a href="/dashboard/apps/${deployment.ref.app}/calls">Calls and maps<span class="visually-hidden"> of ${deployment.ref.app}</span></a></p>
  ${workloadTable(deployment.ref.app, await workloadsOf(services, deployment), false)}
</section>`,
      ),
    );
    sendPage(
      ctx,
      page({
        title: 'Apps',
        section: 'apps',
        viewer,
        body: html`${doneNotice(ctx)}${sections.length === 0 ? html`<p>No app is deployed in ${viewer.session.workspace} yet. Deploy one with <code>svc deploy app.py</code>.</p>` : sections}`,
      }),
    );
  });
}

/** One app: its workloads, scheduled runs, warnings and the pause or resume action. */
async function showApp(services: DashboardServices, ctx: Params): Promise<void> {
  const viewer = await signedIn(ctx, services);
  if (viewer === null) return;
  await renderErrors(ctx, viewer, async () => {
    const deployment = requireApp(ctx.params, viewer.principal, services);
    const app = deployment.ref.app;
    const transition = deployment.paused ? 'resume' : 'pause';
    const runs = await scheduledRunsOf(services, deployment);
    sendPage(
      ctx,
      page({
        title: `App ${app}`,
        section: 'apps',
        viewer,
        body: html`${doneNotice(ctx)}${deployment.paused ? notice('ok', 'This app is paused.') : ''}
${workloadTable(app, await workloadsOf(services, deployment), true)}
<p class="actions"><a class="button" href="/dashboard/apps/${app}/${transition}">${ACTIONS[transition].what} ${app}</a> <a class="button" href="/dashboard/apps/${app}/history">History<span class="visually-hidden"> of ${app}</span></a> <a class="button" href="/dashboard/apps/${app}/rollover">Roll over ${app}</a> <a class="button" href="/dashboard/apps/${app}/calls">Calls and maps<span class="visually-hidden"> of ${app}</span></a></p>
${scheduledRunsCard(deployment, runs)}
${deployment.warnings.length === 0 ? '' : html`<section class="card" aria-labelledby="warnings"><h2 id="warnings">Warnings</h2><ul>${deployment.warnings.map((w) => html`<li>${w}</li>`)}</ul></section>`}`,
      }),
    );
  });
}

/** The lines kept of one workload's log, which the page's script then follows. */
async function workloadLogs(services: DashboardServices, ctx: Params): Promise<void> {
  const viewer = await signedIn(ctx, services);
  if (viewer === null) return;
  await renderErrors(ctx, viewer, async () => {
    const deployment = requireApp(ctx.params, viewer.principal, services);
    const workload = ctx.params.workload!;
    if (!deployment.workloads.some((w) => w.name === workload))
      throw new SvcError('not_found', `the app ${deployment.ref.app} has no workload ${workload}.`);
    const key = { ...deployment.ref, workload };
    const lines = services.logs.lines(key);
    sendPage(
      ctx,
      page({
        title: `Logs of ${workload}`,
        section: 'apps',
        viewer,
        body: html`<p><a href="/dashboard/apps/${deployment.ref.app}">← ${deployment.ref.app}</a> · <span id="follow-state" role="status">The lines kept so far; new ones follow here as they come (reload without JavaScript).</span></p>
<pre class="log" id="log" role="log" tabindex="0" aria-label="Log lines of ${workload}" data-follow="${ctx.path}/events?csrf=${encodeURIComponent(viewer.session.csrf)}">${lines.map((line) => `${line.time.slice(11, 19)} ${line.container} ${line.stream}: ${line.text}\n`)}</pre>`,
      }),
    );
  });
}

/** Ends `stream` once the session is gone or no longer reaches the workspace, so no line follows sign-out or removal. */
function endWithSession(services: DashboardServices, stream: Readable, secret: string): void {
  const check = setInterval(() => {
    void (async () => {
      const session = await services.controlPlane.sessions.find(secret).catch(() => null);
      const account = session === null ? null : await services.controlPlane.accounts.get(session.accountId).catch(() => null);
      if (session !== null && account !== null && account.workspaces.includes(session.workspace)) return;
      clearInterval(check);
      if (stream.readableEnded || stream.destroyed) return;
      stream.push(`event: end\ndata: ${JSON.stringify({ reason: 'signed_out' })}\n\n`);
      stream.push(null);
    })();
  }, LOG_SESSION_CHECK_MS);
  check.unref();
  stream.once('close', () => clearInterval(check));
  stream.once('end', () => clearInterval(check));
}

async function workloadsOf(services: DashboardServices, deployment: Deployment): Promise<WorkloadView[]> {
  const described = await describeApp(deployment, services);
  return deployment.workloads
    .map((w) =>
      workloadView(
        deployment,
        w,
        described.deployments.find((d) => d.workload === w.name),
        services,
      ),
    )
    .sort((a, b) => a.name.localeCompare(b.name));
}

function workloadTable(app: string, workloads: readonly WorkloadView[], withActions: boolean): Html {
  return html`<div class="scroll"><table>
  <thead><tr><th scope="col">Workload</th><th scope="col">Kind</th><th scope="col">Status</th><th scope="col">Version</th><th scope="col">Containers</th><th scope="col">Requests</th><th scope="col">URL</th>${withActions ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : ''}</tr></thead>
  <tbody>${workloads.map(
    (w) => html`<tr>
    <th scope="row"><a href="/dashboard/apps/${app}/workloads/${w.name}">${w.name}</a></th><td>${w.kind}</td><td><span class="status ${w.tone}">${w.status}</span></td>
    <td>v${w.version}${w.deployedAt === null ? '' : html`<br><time class="help" datetime="${w.deployedAt}">${w.deployedAt.slice(0, 16).replace('T', ' ')} UTC</time>`}</td>
    <td>${w.running} of at most ${w.maxContainers}${w.scaledByHand ? html` <span class="badge" title="svc deployment scale: until its next deploy">scaled by hand</span>` : ''}${w.starting > 0 ? html`<br>${w.starting} starting` : ''}</td>
    <td>${w.inFlight} in flight, ${w.queued} queued</td>
    <td>${w.url === null ? '—' : html`<code id="url-${app}-${w.name}">${w.url}</code> <button type="button" class="small" data-copy="url-${app}-${w.name}" hidden>Copy<span class="visually-hidden"> the URL of ${w.name}</span></button>`}</td>
    ${
      withActions
        ? html`<td class="actions"><a href="/dashboard/apps/${app}/workloads/${w.name}/logs">Logs<span class="visually-hidden"> of ${w.name}</span></a>
      <a href="/dashboard/apps/${app}/workloads/${w.name}/stop">Stop<span class="visually-hidden"> ${w.name}</span></a>
      <a href="/dashboard/apps/${app}/workloads/${w.name}/delete">Delete<span class="visually-hidden"> ${w.name}</span></a></td>`
        : ''
    }
  </tr>`,
  )}</tbody>
</table></div>`;
}

/** The action named in the path, on the app (and workload) named in it; `not_found` for anything else. */
function target(
  services: DashboardServices,
  ctx: Params,
  viewer: Viewer,
  scope: 'app' | 'workload',
): { action: Action; deployment: Deployment; workload: string | null } {
  const action = ctx.params.action as Action;
  if (!Object.hasOwn(ACTIONS, action) || ACTIONS[action].scope !== scope)
    throw new SvcError('not_found', `there is no action ${JSON.stringify(ctx.params.action)} here.`);
  const deployment = requireApp(ctx.params, viewer.principal, services);
  const workload = scope === 'workload' ? ctx.params.workload! : null;
  if (workload !== null && !deployment.workloads.some((w) => w.name === workload)) {
    throw new SvcError('not_found', `the app ${deployment.ref.app} has no workload ${workload}.`);
  }
  return { action, deployment, workload };
}

async function confirm(services: DashboardServices, ctx: Params, scope: 'app' | 'workload'): Promise<void> {
  const viewer = await signedIn(ctx, services);
  if (viewer === null) return;
  await renderErrors(ctx, viewer, async () => {
    const { action, deployment, workload } = target(services, ctx, viewer, scope);
    const { what, effect } = ACTIONS[action];
    const app = deployment.ref.app;
    const subject = workload === null ? `the app ${app}` : `${workload} of ${app}`;
    sendPage(
      ctx,
      page({
        title: `${what} ${subject}?`,
        section: 'apps',
        viewer,
        body: html`<div class="card"><p>${effect}</p>
  <form method="post" action="${ctx.path}" class="actions">
    ${csrfField(viewer)}
    <button type="submit" class="${action === 'delete' || action === 'stop' ? 'danger' : ''}">${what} ${subject}</button>
    <a href="/dashboard/apps/${app}">Cancel</a>
  </form></div>`,
      }),
    );
  });
}

async function act(services: DashboardServices, ctx: Params, scope: 'app' | 'workload'): Promise<void> {
  const body = await readForm(ctx);
  const viewer = await signedIn(ctx, services);
  if (viewer === null) return;
  await renderErrors(ctx, viewer, async () => {
    checkCsrf(ctx, body, viewer.session.csrf);
    const { action, deployment, workload } = target(services, ctx, viewer, scope);
    const ref = appRef(ctx.params, viewer.principal);
    if (action === 'pause') await services.deployments.pause(ref);
    else if (action === 'resume') await services.deployments.resume(ref);
    else if (action === 'rollover') await services.deployments.rollover(ref);
    else if (action === 'stop') await services.deployments.stopWorkload(ref, workload!);
    else await services.deployments.deleteWorkload(ref, workload!);
    const gone = services.deployments.get(ref) === null;
    redirect(
      ctx,
      `${gone ? '/dashboard' : `/dashboard/apps/${deployment.ref.app}`}?done=${encodeURIComponent(`${workload ?? deployment.ref.app} ${ACTIONS[action].done}`)}`,
    );
  });
}

function doneNotice(ctx: Context): Html | '' {
  const done = ctx.query.done;
  return typeof done === 'string' ? notice('ok', `${done.charAt(0).toUpperCase()}${done.slice(1)}.`) : '';
}

/** The log lines of a workload as server-sent events, for the logs page to follow. */
async function logEvents(services: DashboardServices, ctx: Params): Promise<void> {
  // An EventSource is no navigation: the session's CSRF token in the URL (from the logs page) says it is the dashboard's own.
  const viewer = await readViewer(ctx, services, { subresource: true });
  if (viewer === null) throw new SvcError('unauthorized', 'sign in to follow logs: open the logs page of the dashboard.');
  checkCsrf(ctx, { _csrf: ctx.query.csrf }, viewer.session.csrf);
  const deployment = requireApp(ctx.params, viewer.principal, services);
  const workload = ctx.params.workload!;
  if (!deployment.workloads.some((w) => w.name === workload))
    throw new SvcError('not_found', `the app ${deployment.ref.app} has no workload ${workload}.`);
  // The kept lines are on the page already: the stream repeats them, and the script shows each line once by its position.
  const answer = logsAnswer(services, { ...deployment.ref, workload }, { accept: 'text/event-stream' });
  securityHeaders(ctx);
  for (const [name, value] of Object.entries(answer.headers ?? {})) ctx.set(name, value);
  ctx.status = answer.status;
  ctx.body = answer.body;
  endWithSession(services, answer.body as Readable, viewer.secret);
}
