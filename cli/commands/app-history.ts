/**
 * `svc app history | rollback | rollover`: the versions an app keeps and what each changed, running an
 * earlier one again, and fresh containers of the ones running (`/api/v1/apps/:app/history`,
 * `/rollback`, `/rollover`). Rollback and rollover switch as a deploy does, with no failed request.
 */
import type { AppView } from '../../core/http/api/app-view.js';
import type { HistoryEntry } from '../../core/services/deployments/history.js';
import { SvcError } from '../../core/model/errors.js';
import { connect, type CommandContext } from '../context.js';
import { formatTable } from '../table.js';
import { shortTime } from '../time.js';
import { appPath, printDeployments, type JsonFlag } from './app.js';

export async function appHistory(context: CommandContext, app: string, flags: JsonFlag = {}): Promise<void> {
  const { out } = context;
  const { client } = await connect(context);
  const { versions } = await client.get<{ versions: HistoryEntry[] }>(`${appPath(app)}/history`);
  if (flags.json) return out.result(JSON.stringify({ versions }, null, 2));
  const rows = versions.map((v) => [
    `${v.current ? '* ' : '  '}v${v.version}`,
    v.workload,
    shortTime(v.createdAt),
    v.createdBy ?? '-',
    v.bundleSha256 === null ? '-' : v.bundleSha256.slice(0, 12),
    v.changes.join(', '),
  ]);
  for (const line of formatTable(['  VERSION', 'WORKLOAD', 'DEPLOYED', 'BY', 'CODE', 'CHANGED'], rows, out.color)) out.result(line);
  out.step(`* marks the version each workload runs; svc app rollback ${app} [version] runs an earlier one again`);
}

export async function appRollback(context: CommandContext, app: string, version: string | undefined, flags: JsonFlag = {}): Promise<void> {
  const { out } = context;
  const number = version === undefined ? undefined : versionNumber(version);
  const { client } = await connect(context);
  out.step(`rolling ${app} back to ${number === undefined ? 'the version before' : `v${number}`}: starting it, then switching…`);
  const view = await client.post<AppView>(`${appPath(app)}/rollback`, number === undefined ? {} : { version: number }, { long: true });
  if (flags.json) return out.result(JSON.stringify(view, null, 2));
  out.done(`rolled ${app} back; the versions it replaced drain`);
  printDeployments(out, view);
}

export async function appRollover(context: CommandContext, app: string, flags: JsonFlag = {}): Promise<void> {
  const { out } = context;
  const { client } = await connect(context);
  out.step(`rolling ${app} over: fresh containers of the versions it runs…`);
  const view = await client.post<AppView>(`${appPath(app)}/rollover`, undefined, { long: true });
  if (flags.json) return out.result(JSON.stringify(view, null, 2));
  out.done(`rolled ${app} over; the containers it replaced drain`);
  printDeployments(out, view);
}

/** `3` or `v3`. */
function versionNumber(text: string): number {
  const match = /^v?(\d{1,9})$/.exec(text.trim());
  if (match === null || Number(match[1]) < 1) {
    throw new SvcError('usage_invalid', `${JSON.stringify(text)} is not a version: give its number, like 3 or v3.`, {
      hint: 'svc app history <app> lists the versions kept.',
    });
  }
  return Number(match[1]);
}
