/**
 * `svc member list | invite <name> [--role owner|member] | remove <account id>`:
 * the people of the workspace svc acts in. An invitation prints a one-time
 * sign-in link for the new person (valid 7 days) on stdout: send it to them.
 */
import { API_PREFIX } from '../api-client.js';
import { connect, type CommandContext } from '../context.js';
import { formatTable } from '../table.js';

interface MemberView {
  readonly id: string;
  readonly name: string;
  readonly role: string;
  readonly joined: boolean;
}

export interface MemberFlags {
  readonly json?: boolean;
  readonly role?: string;
}

export async function memberList(context: CommandContext, flags: MemberFlags = {}): Promise<void> {
  const { client } = await connect(context);
  const { members } = await client.get<{ members: MemberView[] }>(`${API_PREFIX}/members`);
  const { out } = context;
  if (flags.json) return out.result(JSON.stringify({ members }, null, 2));
  const rows = members.map((m) => [m.id, m.name, m.role, m.joined ? 'joined' : out.color.dim('invited')]);
  for (const line of formatTable(['ACCOUNT', 'NAME', 'ROLE', 'STATE'], rows, out.color)) out.result(line);
}

export async function memberInvite(context: CommandContext, name: string, flags: MemberFlags = {}): Promise<void> {
  const { client, credentials } = await connect(context);
  const body = flags.role === undefined ? { name } : { name, role: flags.role };
  const invited = await client.post<{ member: MemberView; path: string; expiresAt: string }>(`${API_PREFIX}/members`, body);
  const link = `${credentials.server}${invited.path}`;
  const { out } = context;
  if (flags.json) return out.result(JSON.stringify({ member: invited.member, link, expiresAt: invited.expiresAt }, null, 2));
  out.done(`invited ${invited.member.name} (${invited.member.id}) as ${invited.member.role}`);
  out.warn(`send them the link below: it signs them in once, until ${invited.expiresAt}, and is shown this once`);
  out.result(link);
}

export async function memberRemove(context: CommandContext, id: string, flags: MemberFlags = {}): Promise<void> {
  const { client } = await connect(context);
  const account = String(id).trim();
  await client.delete(`${API_PREFIX}/members/${encodeURIComponent(account)}`);
  const { out } = context;
  if (flags.json) return out.result(JSON.stringify({ removed: account }, null, 2));
  out.done(`removed ${account}: signed out of this workspace, their tokens here revoked`);
}
