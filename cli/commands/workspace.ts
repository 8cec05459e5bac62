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
