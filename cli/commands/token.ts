/**
 * `svc token create | list | revoke`: access tokens of the workspace
 * (`/api/v1/tokens`). A new token's secret is printed once, alone on stdout
 * (`svc token create > token.txt` keeps just it); everything else goes to stderr.
 */
import { SvcError } from '../../core/model/errors.js';
import { API_PREFIX } from '../api-client.js';
import { connect, type CommandContext } from '../context.js';
import { parseDuration, parseIsoTime } from '../durations.js';
import { colorStatus, formatTable } from '../table.js';
import { shortTime } from '../time.js';

export interface TokenView {
  readonly id: string;
  readonly name: string;
  readonly workspace: string;
  readonly subject: string;
  readonly createdBy: string;
  readonly createdAt: string;
  readonly expiresAt: string | null;
  /** Listings only: its last use (null: never). */
  readonly lastUsedAt?: string | null;
}

export interface TokenCreateFlags {
  readonly name?: string;
  readonly 'expires-in'?: string;
  readonly 'expires-at'?: string;
  readonly json?: boolean;
}

export async function tokenCreate(context: CommandContext, flags: TokenCreateFlags = {}, now: number = Date.now()): Promise<void> {
  const body: { name?: string; expiresAt?: string } = {};
  if (flags.name !== undefined) body.name = String(flags.name);
  const expiresIn = flags['expires-in'];
  const expiresAt = flags['expires-at'];
  if (expiresIn !== undefined && expiresAt !== undefined) {
    throw new SvcError('usage_invalid', '--expires-in and --expires-at both say when the token expires; give one of them.');
  }
  if (expiresIn !== undefined) body.expiresAt = new Date(now + parseDuration(String(expiresIn), '--expires-in')).toISOString();
  if (expiresAt !== undefined) {
    const time = parseIsoTime(String(expiresAt));
    if (time === null) {
      throw new SvcError(
        'usage_invalid',
        `--expires-at takes an ISO 8601 time with its zone, such as 2030-01-31T12:00:00Z, got ${JSON.stringify(expiresAt)}.`,
      );
    }
    body.expiresAt = time.toISOString();
  }
  const { client } = await connect(context);
  const created = await client.post<TokenView & { secret: string }>(`${API_PREFIX}/tokens`, body);
  const { out } = context;
  if (flags.json) {
    out.result(JSON.stringify(created, null, 2));
    return;
  }
  out.done(
    `created the token ${created.id}${created.name ? ` "${created.name}"` : ''} in workspace ${created.workspace}, ${created.expiresAt ? `expiring ${created.expiresAt}` : 'never expiring'}`,
  );
  out.warn('the secret below is shown this once: store it now (svc keeps only its hash)');
  out.result(created.secret);
}

export interface TokenListFlags {
  readonly json?: boolean;
}

export async function tokenList(context: CommandContext, flags: TokenListFlags = {}, now: number = Date.now()): Promise<void> {
  const { client } = await connect(context);
  const { tokens } = await client.get<{ tokens: TokenView[] }>(`${API_PREFIX}/tokens`);
  const { out } = context;
  if (flags.json) {
    out.result(JSON.stringify({ tokens }, null, 2));
    return;
  }
  if (tokens.length === 0) {
    out.step('no tokens');
    return;
  }
  const rows = tokens.map((token) => {
    const expired = token.expiresAt !== null && Date.parse(token.expiresAt) <= now;
    const expires =
      token.expiresAt === null
        ? out.color.dim('never')
        : expired
          ? `${shortTime(token.expiresAt)} ${colorStatus('expired', out.color)}`
          : shortTime(token.expiresAt);
    const used = token.lastUsedAt ? shortTime(token.lastUsedAt) : out.color.dim('never');
    return [token.id, token.name, shortTime(token.createdAt), used, expires];
  });
  for (const line of formatTable(['ID', 'NAME', 'CREATED', 'LAST USED', 'EXPIRES'], rows, out.color)) out.result(line);
}

export interface TokenRevokeFlags {
  readonly json?: boolean;
}

export async function tokenRevoke(context: CommandContext, id: string, flags: TokenRevokeFlags = {}): Promise<void> {
  const tokenId = String(id).trim();
  const { client } = await connect(context);
  await client.delete(`${API_PREFIX}/tokens/${encodeURIComponent(tokenId)}`);
  if (flags.json) context.out.result(JSON.stringify({ revoked: tokenId }));
  else context.out.done(`revoked ${tokenId}: every request with it gets 401 from now on`);
}
