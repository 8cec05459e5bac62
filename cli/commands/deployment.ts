/**
 * `svc deployment list [--app A] | stop <app>/<workload> | delete <app>/<workload>`:
 * one workload of a deployed app at a time (`app:workload` works too).
 * The list reads `GET /api/v1/deployments` (with the autoscaler's view of
 * each) and each app's lifecycle status (`GET /api/v1/apps/:app`).
 */
import type { AppView } from '../../core/http/api/app-view.js';
import type { DeploymentListing } from '../../core/http/api/deployments.js';
import { SvcError } from '../../core/model/errors.js';
import { API_PREFIX } from '../api-client.js';
import { connect, type CommandContext } from '../context.js';
import { parseDeploymentName } from '../names.js';
import { colorStatus, formatTable } from '../table.js';
import { appPath, findApp, printDeployments, type JsonFlag } from './app.js';

export interface DeploymentListFlags extends JsonFlag {
  readonly app?: string;
}

/** A listed deployment with its lifecycle status (`running`, `paused`, `stopped`, …; `preview` for previews). */
export type ListedDeployment = DeploymentListing & { readonly status: string };

export async function deploymentList(context: CommandContext, flags: DeploymentListFlags = {}): Promise<void> {
  const { client } = await connect(context);
  const { out } = context;
  const app = flags.app === undefined ? undefined : String(flags.app);
  const { deployments } = await client.get<{ deployments: DeploymentListing[] }>(`${API_PREFIX}/deployments`);
  const mine = deployments.filter((d) => app === undefined || d.app === app);
  // Lifecycle statuses live with the apps: one request per deployed app listed.
  const apps = [...new Set(mine.filter((d) => d.stage === 'deployed').map((d) => d.app))];
  const views = new Map<string, AppView | null>(await Promise.all(apps.map(async (name) => [name, await findApp(client, name)] as const)));
  const listed: ListedDeployment[] = mine.map((d) => ({
    ...d,
    status: d.stage === 'deployed' ? (views.get(d.app)?.deployments.find((v) => v.workload === d.workload)?.status ?? d.state) : 'preview',
  }));
  if (flags.json) {
    out.result(JSON.stringify({ deployments: listed }, null, 2));
    return;
  }
  if (listed.length === 0) {
    out.step(app === undefined ? 'no deployments yet: svc deploy <file or module> makes some' : `no deployments of ${app}`);
    return;
  }
  const rows = listed.map((d) => [
    d.name,
    d.kind,
    colorStatus(d.status, out.color),
    d.kind === 'function'
      ? out.color.dim('-')
      : `${d.containers.ready}${d.containers.starting > 0 ? ` +${d.containers.starting} starting` : ''}`,
    scaleText(d.scaling),
    d.urls.path ?? out.color.dim('-'),
  ]);
  for (const line of formatTable(['NAME', 'KIND', 'STATUS', 'CONTAINERS', 'SCALE', 'URL'], rows, out.color)) out.result(line);
}

export async function deploymentStop(context: CommandContext, name: string, flags: JsonFlag = {}): Promise<void> {
  const { app, workload } = parseDeploymentName(name);
  const { client } = await connect(context);
  const { out } = context;
  out.step(`stopping ${app}/${workload}: requests in flight finish first…`);
  const view = await client.post<AppView>(`${appPath(app)}/deployments/${encodeURIComponent(workload)}/stop`, undefined, { long: true });
  if (flags.json) {
    out.result(JSON.stringify(view, null, 2));
    return;
  }
  out.done(`stopped ${app}/${workload}: its URL answers 503 deployment_stopped until the workload is deployed again`);
  printDeployments(out, view, (w) => w === workload);
}

export async function deploymentDelete(context: CommandContext, name: string, flags: JsonFlag = {}): Promise<void> {
  const { app, workload } = parseDeploymentName(name);
  const { client } = await connect(context);
  await client.delete(`${appPath(app)}/deployments/${encodeURIComponent(workload)}`, { long: true });
  if (flags.json) context.out.result(JSON.stringify({ deployment: `${app}/${workload}`, deleted: true }));
  else context.out.done(`deleted ${app}/${workload}: its URL answers 404 from now on`);
}

/** `0-3`, `+1 idle` with a buffer, `(by hand)` when svc deployment scale set them; `-` for functions. */
function scaleText(scaling: DeploymentListing['scaling']): string {
  if (scaling === null) return '-';
  return `${scaling.min}-${scaling.max}${scaling.buffer > 0 ? ` +${scaling.buffer} idle` : ''}${scaling.byHand ? ' (by hand)' : ''}`;
}

export interface DeploymentScaleFlags extends JsonFlag {
  readonly min?: unknown;
  readonly max?: unknown;
  readonly buffer?: unknown;
}

/** `svc deployment scale <app>/<workload> --min N --max M --buffer B`: new bounds at once, until the next deploy. */
export async function deploymentScale(context: CommandContext, name: string, flags: DeploymentScaleFlags = {}): Promise<void> {
  const { app, workload } = parseDeploymentName(name);
  const change = {
    ...countFlag('min', flags.min),
    ...countFlag('max', flags.max),
    ...countFlag('buffer', flags.buffer),
  };
  if (Object.keys(change).length === 0) {
    throw new SvcError('usage_invalid', 'give at least one of --min, --max and --buffer.', {
      hint: `For example: svc deployment scale ${app}/${workload} --min 2 --max 5`,
    });
  }
  const { client } = await connect(context);
  const view = await client.post<AppView>(`${appPath(app)}/deployments/${encodeURIComponent(workload)}/scale`, change);
  if (flags.json) return context.out.result(JSON.stringify(view, null, 2));
  context.out.done(`scaled ${app}/${workload} by hand: its code's bounds come back with its next deploy`);
  printDeployments(context.out, view, (w) => w === workload);
}

function countFlag(name: string, value: unknown): Record<string, number> {
  if (value === undefined) return {};
  const text = String(value);
  if (!/^\d{1,4}$/.test(text))
    throw new SvcError('usage_invalid', `--${name} ${JSON.stringify(text)} is not a whole number.`, {
      hint: `--${name} takes a count, like --${name} 2.`,
    });
  return { [name]: Number(text) };
}
