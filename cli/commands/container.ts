/**
 * `svc container list [app] | logs <id> [--follow] | exec <id> -- <command> | stop <id>`: the running
 * containers of the workspace (`/api/v1/containers`), one's log lines, a command run inside one (owners),
 * and stopping one (the autoscaler starts another if its deployment still wants one, as after a crash).
 */
import type { ContainerView } from '../../core/http/api/containers.js';
import { formatBytes } from '../../core/model/format-bytes.js';
import type { DeploymentLogLine } from '../../core/infra/logs/types.js';
import type { ExecOutcome } from '../../core/infra/scheduler/types.js';
import { SvcError } from '../../core/model/errors.js';
import { API_PREFIX } from '../api-client.js';
import { connect, type CommandContext } from '../context.js';
import { formatTable } from '../table.js';
import type { JsonFlag } from './app.js';

const containerPath = (id: string) => `${API_PREFIX}/containers/${encodeURIComponent(id)}`;

export async function containerList(context: CommandContext, app: string | undefined, flags: JsonFlag = {}): Promise<void> {
  const { out } = context;
  const { client } = await connect(context);
  const { containers } = await client.get<{ containers: ContainerView[] }>(
    `${API_PREFIX}/containers${app === undefined ? '' : `?app=${encodeURIComponent(app)}`}`,
  );
  if (flags.json) return out.result(JSON.stringify({ containers }, null, 2));
  if (containers.length === 0) return out.step(app === undefined ? 'no container runs now' : `no container of ${app} runs now`);
  const rows = containers.map((c) => [
    c.id,
    c.deployment,
    `v${c.version}`,
    c.state,
    age(c.ageSeconds),
    String(c.inFlight),
    c.cpuSeconds === null ? '-' : `${c.cpuSeconds.toFixed(1)} s`,
    c.memoryBytes === null ? '-' : formatBytes(c.memoryBytes),
  ]);
  // The GPU column where some container holds or waits for GPUs, as svc usage's GPU SECONDS.
  const gpus = containers.some((c) => c.gpu !== null);
  if (gpus) for (const [at, c] of containers.entries()) rows[at]!.push(gpuColumn(c.gpu));
  const head = ['ID', 'DEPLOYMENT', 'VERSION', 'STATE', 'AGE', 'IN FLIGHT', 'CPU', 'MEMORY', ...(gpus ? ['GPU'] : [])];
  for (const line of formatTable(head, rows, out.color)) out.result(line);
}

/** `L4×1` held, `waiting (any)` for one waiting, `-` for none. */
export function gpuColumn(gpu: ContainerView['gpu']): string {
  if (gpu === null) return '-';
  return gpu.state === 'held' ? `${gpu.model}×${gpu.count}` : `waiting (${gpu.request})`;
}

export async function containerLogs(
  context: CommandContext,
  id: string,
  flags: JsonFlag & { readonly follow?: boolean } = {},
): Promise<void> {
  const { client } = await connect(context);
  const print = (line: DeploymentLogLine) =>
    context.out.result(flags.json ? JSON.stringify(line) : `${line.time.slice(11, 19)} ${line.stream}: ${line.text}`);
  if (!flags.follow) {
    const { lines } = await client.get<{ lines: DeploymentLogLine[] }>(`${containerPath(id)}/logs`);
    for (const line of lines) print(line);
    if (lines.length === 0) context.out.step(`no log lines kept of ${id} yet`);
    return;
  }
  context.out.step(`following ${id}; press Ctrl-C to stop`);
  for await (const event of client.events(`${containerPath(id)}/logs`, context.signal)) {
    if (event.event === 'log') print(JSON.parse(event.data) as DeploymentLogLine);
    else if (event.event === 'end') break;
  }
}

export async function containerStop(context: CommandContext, id: string, flags: JsonFlag = {}): Promise<void> {
  const { client } = await connect(context);
  context.out.step(`stopping ${id}: its requests in flight finish first…`);
  const stopped = await client.post<ContainerView>(`${containerPath(id)}/stop`, undefined, { long: true });
  if (flags.json) return context.out.result(JSON.stringify(stopped, null, 2));
  context.out.done(`stopped ${id} of ${stopped.deployment}; the autoscaler starts another if the deployment still wants one`);
}

function age(seconds: number): string {
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  return `${Math.floor(seconds / 3600)}h`;
}

/**
 * `svc container exec <id> -- <command...>`: the command runs inside the container; its output is printed as
 * it was written (stdout to stdout, stderr to stderr) and svc exits with its exit code (124 past the time-out).
 */
export async function containerExec(
  context: CommandContext,
  id: string,
  argv: readonly string[],
  flags: JsonFlag & { readonly timeout?: unknown } = {},
): Promise<number> {
  if (argv.length === 0) {
    throw new SvcError('usage_invalid', 'give the command to run after --: svc container exec <id> -- ps aux', {
      hint: "The -- keeps the command's own flags from being read as svc's.",
    });
  }
  const timeoutSeconds = flags.timeout === undefined ? undefined : Number(flags.timeout);
  if (timeoutSeconds !== undefined && !(Number.isInteger(timeoutSeconds) && timeoutSeconds >= 1 && timeoutSeconds <= 600)) {
    throw new SvcError(
      'usage_invalid',
      `--timeout ${JSON.stringify(String(flags.timeout))} is not a whole number of seconds from 1 to 600.`,
    );
  }
  const { client } = await connect(context);
  const outcome = await client.post<ExecOutcome>(
    `${containerPath(id)}/exec`,
    { command: argv, ...(timeoutSeconds === undefined ? {} : { timeoutSeconds }) },
    { long: true },
  );
  if (flags.json) {
    context.out.result(JSON.stringify(outcome, null, 2));
  } else {
    if (outcome.stdout !== '') context.out.result(outcome.stdout.replace(/\n$/, ''));
    if (outcome.stderr !== '') context.stderr.write(outcome.stderr);
    if (outcome.truncated) context.out.warn('the output was cut at 1 MiB a stream');
    if (outcome.timedOut) context.out.warn(`${argv[0]} ran past its time-out and was killed`);
  }
  return outcome.timedOut ? 124 : (outcome.exitCode ?? 1);
}
