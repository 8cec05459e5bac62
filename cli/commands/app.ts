/**
 * `svc app list | pause <app> | resume <app> | delete <app> [--yes]`: the
 * deployed apps of the workspace (`/api/v1/apps`). Pause and resume print
 * the app's deployments as they are afterwards; delete asks first on a
 * terminal, and refuses to run without --yes elsewhere.
 */
import type { AppSummary, AppView } from '../../core/http/api/app-view.js';
import { SvcError } from '../../core/model/errors.js';
import { API_PREFIX, type ApiClient } from '../api-client.js';
import { connect, type CommandContext } from '../context.js';
import type { Output } from '../output.js';
import { colorStatus, formatTable } from '../table.js';
import { shortTime } from '../time.js';
import { confirm, needsConfirmation } from '../confirm.js';

export interface JsonFlag {
  readonly json?: boolean;
}

export interface AppDeleteFlags extends JsonFlag {
  readonly yes?: boolean;
}

export const appPath = (app: string) => `${API_PREFIX}/apps/${encodeURIComponent(app)}`;

export async function appList(context: CommandContext, flags: JsonFlag = {}): Promise<void> {
  const { client } = await connect(context);
  const { apps } = await client.get<{ apps: AppSummary[] }>(`${API_PREFIX}/apps`);
  const { out } = context;
  if (flags.json) {
    out.result(JSON.stringify({ apps }, null, 2));
    return;
  }
  if (apps.length === 0) {
    out.step('no apps deployed yet: svc deploy <file or module> deploys one');
    return;
  }
  const rows = apps.map((app) => [
    app.name,
    colorStatus(app.paused ? 'paused' : 'running', out.color),
    String(app.workloads),
    shortTime(app.updatedAt),
  ]);
  for (const line of formatTable(['NAME', 'STATUS', 'DEPLOYMENTS', 'UPDATED'], rows, out.color)) out.result(line);
}

export async function appPause(context: CommandContext, app: string, flags: JsonFlag = {}): Promise<void> {
  await transition(context, app, 'pause', flags);
}

export async function appResume(context: CommandContext, app: string, flags: JsonFlag = {}): Promise<void> {
  await transition(context, app, 'resume', flags);
}

async function transition(context: CommandContext, app: string, action: 'pause' | 'resume', flags: JsonFlag): Promise<void> {
  const { client } = await connect(context);
  const { out } = context;
  out.step(action === 'pause' ? `pausing ${app}: requests in flight finish first…` : `resuming ${app}: starting its deployments…`);
  const view = await client.post<AppView>(`${appPath(app)}/${action}`, undefined, { long: true });
  if (flags.json) {
    out.result(JSON.stringify(view, null, 2));
    return;
  }
  out.done(
    action === 'pause' ? `paused ${app}: its URLs answer 503 app_paused until svc app resume ${app} (or a deploy)` : `resumed ${app}`,
  );
  printDeployments(out, view);
}

export async function appDelete(context: CommandContext, app: string, flags: AppDeleteFlags = {}): Promise<void> {
  const { out } = context;
  const ask = needsConfirmation(context, flags.yes, `svc app delete ${app}`, 'deletes the app and every deployment of it');
  const { client } = await connect(context);
  if (ask) {
    const view = await client.get<AppView>(appPath(app));
    const count = view.deployments.length;
    await confirm(
      context,
      `Delete the app ${app} and its ${count} deployment${count === 1 ? '' : 's'}? Their URLs stop answering.`,
      `${app} was not deleted`,
    );
  }
  await client.delete(appPath(app), { long: true });
  if (flags.json) out.result(JSON.stringify({ app, deleted: true }));
  else out.done(`deleted ${app}: its deployments are gone and their URLs answer 404`);
}

/** The deployments of an app view as a table on stdout. */
export function printDeployments(out: Output, view: AppView, only?: (name: string) => boolean): void {
  const rows = view.deployments
    .filter((d) => only === undefined || only(d.workload))
    .map((d) => [d.name, d.kind, colorStatus(d.status, out.color), `v${d.version}`, d.urls.path ?? out.color.dim('-')]);
  for (const line of formatTable(['NAME', 'KIND', 'STATUS', 'VERSION', 'URL'], rows, out.color)) out.result(line);
}

/** The app view, or null when it does not exist (404). */
export async function findApp(client: ApiClient, app: string): Promise<AppView | null> {
  try {
    return await client.get<AppView>(appPath(app));
  } catch (error) {
    if (error instanceof SvcError && error.code === 'not_found') return null;
    throw error;
  }
}
