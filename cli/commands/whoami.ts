/** `svc whoami [--json]`: the server, workspace, account, role and token svc uses, and where it found them. */
import { API_PREFIX } from '../api-client.js';
import { connect, type CommandContext } from '../context.js';
import type { Whoami } from './login.js';

export interface WhoamiFlags {
  readonly json?: boolean;
}

export default async function whoami(context: CommandContext, flags: WhoamiFlags = {}): Promise<void> {
  const { client, credentials } = await connect(context);
  const who = await client.get<Whoami>(`${API_PREFIX}/whoami`);
  const { out } = context;
  if (flags.json) {
    out.result(
      JSON.stringify(
        {
          server: credentials.server,
          workspace: who.workspace,
          subject: who.subject,
          role: who.role,
          tokenId: who.tokenId,
          sources: { server: credentials.sources.server.description, token: credentials.sources.token.description },
        },
        null,
        2,
      ),
    );
    return;
  }
  const { dim } = out.color;
  out.result(`server:     ${credentials.server}  ${dim(`(${credentials.sources.server.description})`)}`);
  out.result(`workspace:  ${who.workspace}`);
  out.result(`account:    ${who.subject}  ${dim(`(${who.role})`)}`);
  out.result(`token:      ${who.tokenId ?? 'unknown'}  ${dim(`(${credentials.sources.token.description})`)}`);
}
