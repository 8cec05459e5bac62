/**
 * `svc dashboard [--no-browser] [--json]`: a fresh one-time sign-in link to
 * the dashboard for the account the CLI is signed in as, printed (stdout)
 * and, on a desktop, opened in the browser. It works once, for 15 minutes.
 */
import { API_PREFIX } from '../api-client.js';
import { connect, type CommandContext } from '../context.js';
import type { SignInLinkAnswer } from '../../core/http/api/sign-in.js';

export interface DashboardFlags {
  /** false: print the link only. */
  readonly browser?: boolean;
  readonly json?: boolean;
}

export default async function dashboard(context: CommandContext, flags: DashboardFlags = {}): Promise<void> {
  const { client, credentials } = await connect(context);
  const answer = await client.post<SignInLinkAnswer>(`${API_PREFIX}/sign-in-links`, {});
  const url = `${credentials.server}${answer.path}`;
  const { out } = context;
  if (flags.json) {
    out.result(JSON.stringify({ url, expiresAt: answer.expiresAt, account: answer.account }, null, 2));
    return;
  }
  out.result(url);
  out.step(`a sign-in link for ${answer.account.name} (${answer.account.id}): it works once, until ${answer.expiresAt}`);
  if (flags.browser !== false && context.interactive) {
    context.openBrowser(url);
    out.step('opened it in your browser (if nothing opened, copy the link)');
  }
}
