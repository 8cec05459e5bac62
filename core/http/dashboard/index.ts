/**
 * The web dashboard, served by `svc server` next to the API: sign-in and
 * sign-out, device approval for `svc login`, Settings → Tokens and Secrets, the apps
 * (with their calls and maps, and each workload's charts of the last hour), usage, the workspace.
 * Server-rendered HTML on Koa and @koa/router; the one script only enhances
 * pages that work without it. Browsers asking for `/` land here; API clients
 * keep their JSON answers.
 */
import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { GatewayState } from '../../traffic/gateway/types.js';
import { assetFiles } from './assets.js';
import { appPages } from './pages/apps.js';
import { appHistoryPages } from './pages/app-history.js';
import { callPages } from './pages/calls.js';
import { devicePages } from './pages/device.js';
import { secretPages } from './pages/secrets.js';
import { volumePages } from './pages/volumes.js';
import { usagePages } from './pages/usage.js';
import { signInPages } from './pages/sign-in.js';
import { tokenPages } from './pages/tokens.js';
import { workspacePages } from './pages/workspace.js';
import { workloadPages } from './pages/workload.js';
import { redirect } from './respond.js';
import type { DashboardServices } from './types.js';

export type { DashboardServices } from './types.js';

export function dashboardRoutes(services: DashboardServices): Middleware<GatewayState> {
  const router = new Router<GatewayState>();
  const assets = assetFiles();
  const signIn = signInPages(services);
  const device = devicePages(services);
  const tokens = tokenPages(services);
  const secrets = secretPages(services);
  const volumes = volumePages(services);
  const usage = usagePages(services);
  const apps = appPages(services);
  const history = appHistoryPages(services);
  const calls = callPages(services);
  const workspace = workspacePages(services);
  const workload = workloadPages(services);

  router.get('/', async (ctx, next) => (ctx.accepts('json', 'html') === 'html' ? redirect(ctx, '/dashboard') : next()));
  router.get('/assets/:name', async (ctx, next) => (assets(ctx) ? undefined : next()));
  router.get('/login', (ctx) => signIn.show(ctx));
  router.post('/login', (ctx) => signIn.signIn(ctx));
  router.post('/logout', (ctx) => signIn.signOut(ctx));
  router.get('/device', (ctx) => device.show(ctx));
  router.post('/device', (ctx) => device.decide(ctx));
  router.get('/dashboard', (ctx) => apps.list(ctx));
  router.get('/dashboard/apps/:app', (ctx) => apps.show(ctx));
  router.get('/dashboard/apps/:app/runs/:id', (ctx) => apps.scheduledRun(ctx));
  router.get('/dashboard/apps/:app/calls', (ctx) => calls.list(ctx));
  router.get('/dashboard/apps/:app/calls/:id', (ctx) => calls.show(ctx));
  router.get('/dashboard/apps/:app/maps', (ctx) => calls.maps(ctx));
  router.get('/dashboard/apps/:app/history', (ctx) => history.history(ctx));
  router.get('/dashboard/apps/:app/history/:version/rollback', (ctx) => history.confirmRollback(ctx));
  router.post('/dashboard/apps/:app/history/:version/rollback', (ctx) => history.rollback(ctx));
  router.get('/dashboard/apps/:app/workloads/:workload', (ctx) => workload.show(ctx));
  router.get('/dashboard/apps/:app/workloads/:workload/charts', (ctx) => workload.charts(ctx));
  router.get('/dashboard/apps/:app/workloads/:workload/logs', (ctx) => apps.logs(ctx));
  router.get('/dashboard/apps/:app/workloads/:workload/logs/events', (ctx) => apps.logEvents(ctx));
  router.get('/dashboard/apps/:app/workloads/:workload/:action', (ctx) => apps.confirmWorkload(ctx));
  router.post('/dashboard/apps/:app/workloads/:workload/:action', (ctx) => apps.actWorkload(ctx));
  router.get('/dashboard/apps/:app/:action', (ctx) => apps.confirmApp(ctx));
  router.post('/dashboard/apps/:app/:action', (ctx) => apps.actApp(ctx));
  router.get('/dashboard/settings/tokens', (ctx) => tokens.list(ctx));
  router.post('/dashboard/settings/tokens', (ctx) => tokens.create(ctx));
  router.get('/dashboard/settings/tokens/:id/revoke', (ctx) => tokens.confirmRevoke(ctx));
  router.post('/dashboard/settings/tokens/:id/revoke', (ctx) => tokens.revoke(ctx));
  router.get('/dashboard/volumes', (ctx) => volumes.list(ctx));
  router.get('/dashboard/usage', (ctx) => usage.show(ctx));
  router.get('/dashboard/settings/secrets', (ctx) => secrets.list(ctx));
  router.post('/dashboard/settings/secrets', (ctx) => secrets.create(ctx));
  router.get('/dashboard/settings/secrets/:name/delete', (ctx) => secrets.confirmDelete(ctx));
  router.post('/dashboard/settings/secrets/:name/delete', (ctx) => secrets.delete(ctx));
  router.get('/dashboard/workspace', (ctx) => workspace.show(ctx));
  router.post('/dashboard/workspace/invitations', (ctx) => workspace.invite(ctx));
  router.get('/dashboard/workspace/members/:id/remove', (ctx) => workspace.confirmRemove(ctx));
  router.post('/dashboard/workspace/members/:id/remove', (ctx) => workspace.remove(ctx));
  router.post('/dashboard/workspace/switch', (ctx) => workspace.switchTo(ctx));
  router.post('/dashboard/workspaces', (ctx) => workspace.create(ctx));
  return router.routes() as Middleware<GatewayState>;
}
