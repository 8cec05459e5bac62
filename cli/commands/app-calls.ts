/**
 * `svc app calls <app> [--status S] [--limit N] [--follow] [--json]`: the spawned calls of an app
 * (`GET /api/v1/apps/:app/calls`), newest first, then its maps running or ended lately
 * (`GET /api/v1/apps/:app/maps`) with their inputs by where they are. With --follow it asks again
 * every second and prints the calls that are new or changed since (the server keeps no stream of
 * them), until Ctrl-C.
 */
import type { CallView } from '../../core/services/calls/types.js';
import type { MapView } from '../../core/services/maps/types.js';
import type { ApiClient } from '../api-client.js';
import { connect, type CommandContext } from '../context.js';
import type { Output } from '../output.js';
import { colorStatus, formatTable } from '../table.js';
import { age } from '../time.js';
import { appPath, type JsonFlag } from './app.js';

export interface AppCallsFlags extends JsonFlag {
  /** Only the calls of this status (the server checks it). */
  readonly status?: string;
  /** The most calls to show: the newest (the server checks it; 100 without it). */
  readonly limit?: string;
  readonly follow?: boolean;
}

const HEADER = ['CALL', 'FUNCTION', 'STATUS', 'AGE', 'DURATION', 'ATTEMPT', 'ERROR'];
/** How often --follow asks again. */
const FOLLOW_EVERY_MS = 1000;

export async function appCalls(context: CommandContext, app: string, flags: AppCallsFlags = {}): Promise<void> {
  const { client } = await connect(context);
  const { out } = context;
  const query = new URLSearchParams();
  if (flags.status !== undefined) query.set('status', flags.status);
  if (flags.limit !== undefined) query.set('limit', flags.limit);
  const search = query.toString();
  const path = `${appPath(app)}/calls${search === '' ? '' : `?${search}`}`;
  const calls = await listed(client, path);
  if (!flags.follow) {
    // After the calls: a map's inputs are not calls of their own (--follow follows the calls alone).
    const { maps } = await client.get<{ maps: MapView[] }>(`${appPath(app)}/maps`);
    if (flags.json) out.result(JSON.stringify({ calls, maps }, null, 2));
    else {
      if (calls.length === 0) out.step(`no ${flags.status === undefined ? '' : `${flags.status} `}call of ${app} is kept`);
      else for (const line of formatTable(HEADER, calls.map(row(out)), out.color)) out.result(line);
      printWaits(out, calls);
      printMaps(out, maps);
    }
    return;
  }
  await follow(context, client, path, calls, flags.json === true);
}

const MAP_HEADER = ['MAP', 'FUNCTION', 'STATUS', 'AGE', 'SUCCEEDED', 'FAILED', 'RUNNING', 'QUEUED', 'CANCELLED'];

/** The app's maps this server runs or ended lately, as a second table. */
function printMaps(out: Output, maps: readonly MapView[]): void {
  if (maps.length === 0) return;
  const now = Date.now();
  out.result('');
  const rows = maps.map((map) => [
    map.id,
    map.function,
    colorStatus(map.status, out.color),
    age(map.createdAt, now),
    ...[map.inputs.succeeded, map.inputs.failed, map.inputs.running, map.inputs.queued, map.inputs.cancelled].map(String),
  ]);
  for (const line of formatTable(MAP_HEADER, rows, out.color)) out.result(line);
  printWaits(out, maps);
}

/** Under a table: why each call (or map) that waits for a GPU waits, a line each. */
function printWaits(out: Output, waiting: readonly { readonly id: string; readonly waiting?: string }[]): void {
  for (const { id, waiting: why } of waiting) if (why !== undefined) out.result(`${id} ${out.color.yellow('waits')}: ${why}`);
}

/** Prints the calls, then every second those new or changed (oldest first), until the context's signal aborts. */
async function follow(context: CommandContext, client: ApiClient, path: string, first: CallView[], json: boolean): Promise<void> {
  const { out, signal } = context;
  const seen = new Map<string, string>();
  const print = (calls: CallView[], header: boolean) => {
    const fresh = calls.filter((call) => seen.get(call.id) !== fingerprint(call)).reverse();
    for (const call of fresh) seen.set(call.id, fingerprint(call));
    if (json) for (const call of fresh) out.result(JSON.stringify(call));
    else if (fresh.length > 0 || header) {
      for (const line of formatTable(HEADER, fresh.map(row(out)), out.color).slice(header ? 0 : 1)) out.result(line);
      printWaits(out, fresh);
    }
  };
  print(first, true);
  out.step('following: new and changed calls appear as they come; press Ctrl-C to stop');
  for (;;) {
    await context.sleep(FOLLOW_EVERY_MS);
    if (signal.aborted) return;
    let calls: CallView[];
    try {
      calls = await listed(client, path, signal);
    } catch (error) {
      if (signal.aborted) return;
      throw error;
    }
    print(calls, false);
  }
}

async function listed(client: ApiClient, path: string, signal?: AbortSignal): Promise<CallView[]> {
  return (await client.get<{ calls: CallView[] }>(path, signal === undefined ? {} : { signal })).calls;
}

/** What a change of the call changes (its age changes by itself). */
function fingerprint(call: CallView): string {
  return JSON.stringify([call.status, call.attempt, call.endedAt, call.error, call.waiting]);
}

function row(out: Output): (call: CallView) => string[] {
  const now = Date.now();
  return (call) => [
    call.id,
    call.function,
    colorStatus(call.status, out.color),
    age(call.createdAt, now),
    call.durationMs === null ? out.color.dim('-') : `${(call.durationMs / 1000).toFixed(1)}s`,
    `${call.attempt}/${call.maxAttempts}`,
    callError(call),
  ];
}

/** The call's error on one line: svc's code first when it has one. */
export function callError(call: Pick<CallView, 'error'>): string {
  if (call.error === null) return '';
  const message = call.error.message.split('\n')[0] ?? '';
  return call.error.code === null ? message : `${call.error.code}: ${message}`;
}
