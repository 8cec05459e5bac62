/**
 * Calls of an app: its maps with their progress, followed live (the page's script polls
 * `/dashboard/apps/<app>/maps` while a map has not ended), its spawned calls newest first with a
 * status filter, and one call's page. Everything is looked up in the viewer's workspace; an app
 * of another one is as unknown as one that never was, here as on the other pages.
 */
import { appCalls, appMaps, callStatus, DEFAULT_CALL_LIST_LIMIT } from '../../api/app-calls.js';
import { appRef } from '../../api/apps.js';
import { noCall } from '../../../services/calls/calls.js';
import { CALL_ID_SOURCE, type CallLogs } from '../../../services/calls/types.js';
import { SvcError } from '../../../model/errors.js';
import type { DeploymentRef } from '../../../model/deployment-keys.js';
import { callDetail, callsCard, mapRow, mapsCard } from '../calls-view.js';
import { html, type Html } from '../html.js';
import { page } from '../layout.js';
import { renderErrors, securityHeaders, sendPage } from '../respond.js';
import { checkCsrf, readViewer, type Context } from '../session-cookie.js';
import type { DashboardServices } from '../types.js';
import { signedIn } from '../viewer.js';

type Params = Context & { params: Record<string, string> };

const CALL_ID = new RegExp(`^${CALL_ID_SOURCE}$`);

export function callPages(services: DashboardServices) {
  return {
    /** The app's maps and calls; `?status=` filters the calls. */
    async list(ctx: Params): Promise<void> {
      const viewer = await signedIn(ctx, services);
      if (viewer === null) return;
      await renderErrors(ctx, viewer, async () => {
        const ref = appRef(ctx.params, viewer.principal);
        const asked = ctx.query.status; // "" is the filter's "all"; a repeated one is refused like any other non-status
        const status = asked === undefined || asked === '' ? undefined : callStatus(asked);
        const maps = services.maps.ofApp(ref.workspace, ref.app);
        const calls = await appCalls(services, ref, { status, limit: DEFAULT_CALL_LIST_LIMIT }, maps.length > 0);
        const live = `/dashboard/apps/${ref.app}/maps?csrf=${encodeURIComponent(viewer.session.csrf)}`;
        sendPage(
          ctx,
          page({
            title: `Calls of ${ref.app}`,
            section: 'apps',
            viewer,
            body: callsPageBody(ref, mapsCard(maps, live), callsCard(ref.app, calls, status, DEFAULT_CALL_LIST_LIMIT, Date.now())),
          }),
        );
      });
    },

    /** One call of the app: its outcome, times, attempts, callback and logs. */
    async show(ctx: Params): Promise<void> {
      const viewer = await signedIn(ctx, services);
      if (viewer === null) return;
      await renderErrors(ctx, viewer, async () => {
        const ref = appRef(ctx.params, viewer.principal);
        const id = ctx.params.id!;
        if (!CALL_ID.test(id)) throw noCall(id);
        const call = await services.calls.get(ref.workspace, id);
        // A call of another app is not found under this one, in the words of one that never was.
        if (call.app !== ref.app) throw noCall(id);
        sendPage(
          ctx,
          page({ title: `Call ${call.id}`, section: 'apps', viewer, body: callDetail(ref.app, call, await logsOf(services, ref, id)) }),
        );
      });
    },

    /** The app's maps as the page's script follows them (JSON); the session's CSRF token in the URL says it is the dashboard's own. */
    async maps(ctx: Params): Promise<void> {
      const viewer = await readViewer(ctx, services, { subresource: true });
      if (viewer === null) throw new SvcError('unauthorized', 'sign in to follow maps: open the Calls page of the dashboard.');
      checkCsrf(ctx, { _csrf: ctx.query.csrf }, viewer.session.csrf);
      const ref = appRef(ctx.params, viewer.principal);
      const maps = await appMaps(services, ref);
      securityHeaders(ctx);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { maps: maps.map(mapRow) };
    },
  };
}

function callsPageBody(ref: DeploymentRef, maps: Html, calls: Html): Html {
  return html`<p><a href="/dashboard/apps/${ref.app}">← ${ref.app}</a></p>${maps}${calls}`;
}

/** What the call printed; null once it expired (its logs went with its outcome). */
async function logsOf(services: DashboardServices, ref: DeploymentRef, id: string): Promise<CallLogs | null> {
  try {
    return await services.calls.logs(ref.workspace, id);
  } catch (error) {
    if (error instanceof SvcError && error.code === 'call_expired') return null;
    throw error;
  }
}
