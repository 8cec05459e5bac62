/**
 * `svc logs <app>[:<workload>] [--follow] [--since DURATION|ISO] [--json]`:
 * the log lines a server keeps of a deployment
 * (`GET /api/v1/apps/:app/deployments/:workload/logs`), or of every
 * deployment of the app merged by time, each line prefixed by its workload.
 * The lines are the result, so they go to stdout (`svc logs app > app.log`).
 * `--since` keeps the lines from that time on (client side). `--follow`
 * then follows each deployment as Server-Sent Events, printing each new line
 * as it comes, until every followed deployment is deleted (`event: end`) or
 * Ctrl-C. `--json` prints one JSON object per line (NDJSON) with `workload`.
 */
import type { AppView } from '../../core/http/api/app-view.js';
import type { DeploymentLogLine } from '../../core/infra/logs/types.js';
import { SvcError } from '../../core/model/errors.js';
import type { ApiClient } from '../api-client.js';
import { connect, type CommandContext } from '../context.js';
import { parseSince } from '../durations.js';
import { parseAppTarget } from '../names.js';
import { appPath } from './app.js';

export interface LogsFlags {
  readonly follow?: boolean;
  readonly since?: string;
  readonly json?: boolean;
}

/** A line of one workload, as printed with --json. */
export type WorkloadLogLine = DeploymentLogLine & { readonly workload: string };

/** After this many followers lagged and reconnected in a row without a line between, svc gives up. */
const MAX_RECONNECTS = 5;

export default async function logs(
  context: CommandContext,
  target: string,
  flags: LogsFlags = {},
  now: number = Date.now(),
): Promise<void> {
  const { app, workload } = parseAppTarget(target);
  const since = flags.since === undefined ? null : parseSince(String(flags.since), now).getTime();
  const { client } = await connect(context);
  const workloads = workload === null ? await workloadsOf(client, app) : [workload];
  const printer = new LinePrinter(context, flags.json === true, workload === null);
  const keep = (line: DeploymentLogLine) => since === null || Date.parse(line.time) >= since;

  // The kept lines of every deployment, merged by time (a stable sort keeps each deployment's order).
  const kept = await Promise.all(
    workloads.map(async (name) => {
      const { lines } = await client.get<{ lines: DeploymentLogLine[] }>(logsPath(app, name));
      return lines.map((line) => ({ ...line, workload: name }));
    }),
  );
  const merged = kept.flat().sort((a, b) => Date.parse(a.time) - Date.parse(b.time));
  for (const line of merged) if (keep(line)) printer.print(line);
  if (!flags.follow) {
    if (merged.length === 0)
      context.out.step(`no log lines kept of ${workload === null ? `the deployments of ${app}` : `${app}/${workload}`} yet`);
    return;
  }

  context.out.step(`following ${workloads.map((w) => `${app}/${w}`).join(', ')}; press Ctrl-C to stop`);
  // One failing follower (the connection lost) stops the others, so that svc exits with its error.
  const stop = new AbortController();
  const stopAll = () => stop.abort();
  context.signal.addEventListener('abort', stopAll, { once: true });
  try {
    await Promise.all(
      workloads.map((name, index) =>
        follow(context, client, stop.signal, app, name, kept[index]!, keep, printer).catch((error: unknown) => {
          stopAll();
          throw error;
        }),
      ),
    );
  } finally {
    context.signal.removeEventListener('abort', stopAll);
  }
}

/** The workloads of every deployment of the app. */
async function workloadsOf(client: ApiClient, app: string): Promise<string[]> {
  const view = await client.get<AppView>(appPath(app));
  if (view.deployments.length === 0)
    throw new SvcError('not_found', `the app ${app} has no deployments.`, { hint: `svc deploy deploys it.` });
  return view.deployments.map((d) => d.workload);
}

const logsPath = (app: string, workload: string) => `${appPath(app)}/deployments/${encodeURIComponent(workload)}/logs`;

/**
 * Follows one deployment until its stream ends with `event: end` (deleted,
 * svc stopping) or the context is stopped. A stream starts with the kept
 * lines, already printed: each connection skips the lines printed before it
 * (counted, so repeated identical lines stay right). A follower cut off for
 * lagging reconnects.
 */
async function follow(
  context: CommandContext,
  client: ApiClient,
  signal: AbortSignal,
  app: string,
  workload: string,
  seen: readonly WorkloadLogLine[],
  keep: (line: DeploymentLogLine) => boolean,
  printer: LinePrinter,
): Promise<void> {
  const recent = new RecentLines(seen);
  let reconnects = 0;
  for (;;) {
    const skip = recent.counts();
    let ended: string | null = null;
    for await (const event of client.events(logsPath(app, workload), signal)) {
      if (event.event === 'log') {
        const line = { ...(JSON.parse(event.data) as DeploymentLogLine), workload };
        const key = lineKey(line);
        const left = skip.get(key) ?? 0;
        if (left > 0) {
          skip.set(key, left - 1);
          continue;
        }
        reconnects = 0;
        recent.add(line);
        if (keep(line)) printer.print(line);
      } else if (event.event === 'end') {
        ended = (JSON.parse(event.data) as { reason?: string }).reason ?? 'ended';
        break;
      }
    }
    if (signal.aborted) return;
    if (ended === 'lagging' && reconnects++ < MAX_RECONNECTS) {
      context.out.warn(`${app}/${workload}: fell behind the server's log stream; reconnecting`);
      continue;
    }
    const why =
      ended === 'deleted'
        ? 'the deployment was deleted'
        : ended === 'closing'
          ? 'the server is stopping'
          : ended === null
            ? 'the server closed the stream'
            : ended;
    context.out.step(`${app}/${workload}: ${why}; stopped following`);
    return;
  }
}

/** The last lines printed of one deployment (as many as a server keeps), to skip them when a stream replays them. */
class RecentLines {
  static readonly MAX = 4000;
  readonly #lines: string[] = [];

  constructor(lines: readonly DeploymentLogLine[]) {
    for (const line of lines) this.add(line);
  }

  add(line: DeploymentLogLine): void {
    this.#lines.push(lineKey(line));
    if (this.#lines.length > RecentLines.MAX) this.#lines.splice(0, this.#lines.length - RecentLines.MAX);
  }

  counts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const key of this.#lines) counts.set(key, (counts.get(key) ?? 0) + 1);
    return counts;
  }
}

const lineKey = (line: DeploymentLogLine) => `${line.time}\u0000${line.container}\u0000${line.stream}\u0000${line.text}`;

/** One line out: `<time> [<workload>] <container> <text>`, system lines dimmed, stderr lines marked; or NDJSON. */
class LinePrinter {
  readonly #context: CommandContext;
  readonly #json: boolean;
  readonly #prefixWorkload: boolean;

  constructor(context: CommandContext, json: boolean, prefixWorkload: boolean) {
    this.#context = context;
    this.#json = json;
    this.#prefixWorkload = prefixWorkload;
  }

  print(line: WorkloadLogLine): void {
    const { out } = this.#context;
    if (this.#json) {
      out.result(
        JSON.stringify({
          workload: line.workload,
          time: line.time,
          container: line.container,
          stream: line.stream,
          text: line.text,
          ...(line.version === undefined ? {} : { version: line.version }),
        }),
      );
      return;
    }
    const { dim, cyan } = out.color;
    const source = this.#prefixWorkload ? `${cyan(line.workload)} ${dim(line.container)}` : dim(line.container);
    const text = line.stream === 'system' ? dim(line.text) : line.text;
    out.result(`${dim(line.time)} ${source} ${text}`);
  }
}
