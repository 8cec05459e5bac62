/**
 * `svc workspace list | create <name> | use <name> | plan | callback-secret`: the workspaces your
 * account may use. `use` gets a token of your account in that workspace and
 * saves it in place of the current one (a token belongs to exactly one
 * workspace), so every later command acts there.
 */
import { API_PREFIX } from '../api-client.js';
import { connect, type CommandContext } from '../context.js';
import { writeCredentials } from '../credentials.js';
import { formatTable } from '../table.js';
import { SvcError } from '../../core/model/errors.js';

interface WorkspaceView {
  readonly name: string;
  readonly plan: string;
  readonly role: string;
  readonly createdAt: string;
}

export interface WorkspaceFlags {
  readonly json?: boolean;
}

export async function workspaceList(context: CommandContext, flags: WorkspaceFlags = {}): Promise<void> {
  const { client } = await connect(context);
  const answer = await client.get<{ current: string; workspaces: WorkspaceView[] }>(`${API_PREFIX}/workspaces`);
  const { out } = context;
  if (flags.json) return out.result(JSON.stringify(answer, null, 2));
  const rows = answer.workspaces.map((w) => [w.name === answer.current ? `${w.name} *` : w.name, w.role, w.plan, w.createdAt.slice(0, 10)]);
  for (const line of formatTable(['WORKSPACE', 'ROLE', 'PLAN', 'CREATED'], rows, out.color)) out.result(line);
  out.step('* the workspace svc acts in; switch with `svc workspace use <name>`');
}

export async function workspaceCreate(context: CommandContext, name: string, flags: WorkspaceFlags = {}): Promise<void> {
  const { client } = await connect(context);
  const created = await client.post<WorkspaceView>(`${API_PREFIX}/workspaces`, { name });
  const { out } = context;
  if (flags.json) return out.result(JSON.stringify(created, null, 2));
  out.done(`created the workspace ${created.name}; you own it`);
  out.result(created.name);
  out.step(`act in it with \`svc workspace use ${created.name}\``);
}

export async function workspaceUse(context: CommandContext, name: string, flags: WorkspaceFlags = {}): Promise<void> {
  const { client, credentials } = await connect(context);
  if (credentials.sources.token.kind === 'env') {
    throw new SvcError('usage_invalid', 'SVC_TOKEN is set: svc uses it whatever it saves, so switching here would change nothing.', {
      hint: `Use a token of workspace ${name} as SVC_TOKEN instead (svc token create, in that workspace), or unset SVC_TOKEN.`,
    });
  }
  const token = await client.post<{ id: string; workspace: string; secret: string }>(
    `${API_PREFIX}/workspaces/${encodeURIComponent(name)}/token`,
    {},
  );
  const file = await writeCredentials({ server: credentials.server, token: token.secret, workspace: token.workspace }, context.env);
  const { out } = context;
  if (flags.json)
    return out.result(JSON.stringify({ server: credentials.server, workspace: token.workspace, tokenId: token.id, file }, null, 2));
  out.done(`saved a token of workspace ${token.workspace} (${token.id}) in ${file}`);
  out.result(`svc acts in workspace ${token.workspace} now.`);
}

interface PlanRecord {
  readonly workspace: string;
  readonly plan: string;
  readonly operator: boolean;
  readonly changes: readonly { from: string; to: string; by: string; at: string }[];
}

/**
 * `svc workspace plan [<workspace> <plan>]`: without arguments, the plan of
 * the workspace svc acts in and every change of it (who, when); with them,
 * the server's operator sets a workspace's plan (anyone else: not_operator).
 */
export async function workspacePlan(
  context: CommandContext,
  name: string | undefined,
  plan: string | undefined,
  flags: WorkspaceFlags = {},
): Promise<void> {
  const { client } = await connect(context);
  const { out } = context;
  if (name !== undefined) {
    if (plan === undefined) throw new SvcError('usage_invalid', 'name the plan too: svc workspace plan <workspace> <free|team|business>');
    const updated = await client.json<WorkspaceView>('PUT', `${API_PREFIX}/workspaces/${encodeURIComponent(name)}/plan`, {
      json: { plan },
    });
    if (flags.json) return out.result(JSON.stringify(updated, null, 2));
    out.done(`the workspace ${updated.name} is on the ${updated.plan} plan`);
    return out.result(updated.plan);
  }
  const record = await client.get<PlanRecord>(`${API_PREFIX}/workspace/plan`);
  if (flags.json) return out.result(JSON.stringify(record, null, 2));
  out.result(`${record.workspace}: ${record.plan}`);
  const rows = record.changes.map((c) => [c.at, `${c.from} → ${c.to}`, c.by]);
  if (rows.length > 0) for (const line of formatTable(['WHEN', 'CHANGE', 'BY'], rows, out.color)) out.result(line);
  out.step(
    record.operator
      ? "you are the server's operator: svc workspace plan <workspace> <plan> changes a plan"
      : "only the server's operator changes plans",
  );
}

/** `svc workspace callback-secret [--rotate]`: the key that signs the workspace's completion callbacks (owners only). */
export async function workspaceCallbackSecret(
  context: CommandContext,
  flags: WorkspaceFlags & { readonly rotate?: boolean } = {},
): Promise<void> {
  const { client } = await connect(context);
  const { out } = context;
  const answer = flags.rotate
    ? await client.post<{ secret: string; createdAt: string }>(`${API_PREFIX}/workspace/callback-secret/rotate`, {})
    : await client.get<{ secret: string; createdAt: string }>(`${API_PREFIX}/workspace/callback-secret`);
  if (flags.json) return out.result(JSON.stringify(answer, null, 2));
  if (flags.rotate) out.done('made a new callback signing secret: callbacks from now on are signed with it, not the old one');
  out.result(answer.secret);
}

interface QuotaView {
  readonly workspace: string;
  readonly quota: { readonly containers?: number; readonly cpu?: number; readonly memoryMiB?: number; readonly gpus?: number } | null;
  readonly source: 'command' | 'config' | null;
  readonly inUse: { readonly containers: number; readonly cpu: number; readonly memoryMiB: number; readonly gpus: number };
}

export interface QuotaFlags extends WorkspaceFlags {
  readonly containers?: string;
  readonly cpu?: string;
  readonly memory?: string;
  readonly gpus?: string;
  readonly clear?: boolean;
}

/**
 * `svc workspace quota [<workspace>] [--containers N] [--cpu C] [--memory MiB] [--gpus G] [--clear]`: without a
 * workspace, the quota of the one svc acts in and what its containers take now; with one and bounds, the
 * server's operator sets its quota (each bound left out has none), or with --clear removes it (the
 * config's holds again).
 */
export async function workspaceQuota(context: CommandContext, name: string | undefined, flags: QuotaFlags = {}): Promise<void> {
  const { client } = await connect(context);
  const { out } = context;
  const bounds = quotaBounds(flags);
  let view: QuotaView;
  if (name === undefined) {
    if (bounds !== null || flags.clear)
      throw new SvcError('usage_invalid', 'name the workspace whose quota to set: svc workspace quota <workspace> --containers N');
    view = await client.get<QuotaView>(`${API_PREFIX}/workspace/quota`);
  } else if (flags.clear) {
    if (bounds !== null)
      throw new SvcError('usage_invalid', '--clear removes the quota: give it without --containers, --cpu, --memory or --gpus.');
    view = await client.json<QuotaView>('DELETE', `${API_PREFIX}/workspaces/${encodeURIComponent(name)}/quota`);
  } else {
    if (bounds === null) throw new SvcError('usage_invalid', 'give --containers, --cpu, --memory (MiB) or --gpus, or --clear.');
    view = await client.json<QuotaView>('PUT', `${API_PREFIX}/workspaces/${encodeURIComponent(name)}/quota`, { json: bounds });
  }
  if (flags.json) return out.result(JSON.stringify(view, null, 2));
  const { quota, inUse } = view;
  const limit = (value: number | undefined, unit = '') => (value === undefined ? 'no bound' : `${value}${unit}`);
  const rows = [
    ['containers', String(inUse.containers), limit(quota?.containers)],
    ['cpu', `${inUse.cpu} cores`, limit(quota?.cpu, ' cores')],
    ['memory', `${inUse.memoryMiB} MiB`, limit(quota?.memoryMiB, ' MiB')],
    ['gpus', String(inUse.gpus), limit(quota?.gpus)],
  ];
  for (const line of formatTable(['QUOTA', 'IN USE', 'LIMIT'], rows, out.color)) out.result(line);
  out.step(
    view.source === null
      ? `${view.workspace} has no quota`
      : `${view.workspace}'s quota ${view.source === 'command' ? "was set by the server's operator" : 'comes from the server config (workspaceQuotas)'}`,
  );
}

/** The bounds the flags give (numbers as the API takes them), or null for none; the server checks their range. */
function quotaBounds(flags: QuotaFlags): Record<string, number> | null {
  const bounds: Record<string, number> = {};
  for (const [flag, key] of [
    ['containers', 'containers'],
    ['cpu', 'cpu'],
    ['memory', 'memoryMiB'],
    ['gpus', 'gpus'],
  ] as const) {
    const text = flags[flag];
    if (text === undefined) continue;
    const value = Number(text);
    if (text.trim() === '' || !Number.isFinite(value))
      throw new SvcError('usage_invalid', `--${flag} takes a number, got ${JSON.stringify(text)}.`);
    bounds[key] = value;
  }
  return Object.keys(bounds).length === 0 ? null : bounds;
}
