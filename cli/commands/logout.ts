/**
 * `svc logout`: revokes the saved token on its server when it can (`GET
 * /api/v1/whoami` for its id, then `DELETE /api/v1/tokens/:id`), then deletes
 * the credentials file, and says what it did. A server that cannot be reached
 * does not keep the file: the token is then left valid, and svc says so.
 */
import { isSvcError } from '../../core/model/errors.js';
import { API_PREFIX, ApiClient } from '../api-client.js';
import type { CommandContext } from '../context.js';
import { credentialsPath, deleteCredentials, readCredentials, type StoredCredentials } from '../credentials.js';
import type { Whoami } from './login.js';

export default async function logout(context: CommandContext): Promise<void> {
  const { out } = context;
  const file = credentialsPath(context.env);
  let stored: StoredCredentials | null = null;
  try {
    stored = (await readCredentials(context.env))?.credentials ?? null;
  } catch (error) {
    if (!isSvcError(error) || error.code !== 'config_invalid') throw error;
    out.warn(`${error.message} It cannot say which token to revoke.`);
  }
  if (stored === null) {
    const removed = await deleteCredentials(context.env);
    if (removed) out.done(`deleted ${file}`);
    else out.step(`not signed in: there is no ${file}`);
    mentionEnvironment(context);
    out.result(removed ? 'Signed out.' : 'Not signed in; nothing to do.');
    return;
  }

  const api = new ApiClient({ server: stored.server, token: stored.token, serverSource: file, tokenSource: file });
  let revoked = false;
  try {
    const who = await api.get<Whoami>(`${API_PREFIX}/whoami`);
    if (who.tokenId) {
      await api.delete(`${API_PREFIX}/tokens/${encodeURIComponent(who.tokenId)}`);
      out.done(`revoked the token ${who.tokenId} on ${stored.server}`);
      revoked = true;
    } else out.warn(`${stored.server} did not say the token's id, so it was not revoked.`);
  } catch (error) {
    if (isSvcError(error) && error.code === 'unauthorized') {
      out.step(`${stored.server} no longer accepts the token (already revoked or expired): nothing to revoke`);
    } else {
      const message = isSvcError(error) ? error.message : String(error);
      out.warn(
        `could not revoke the token on ${stored.server}: ${message} The token stays valid until it expires or is revoked (svc token list, svc token revoke <id>).`,
      );
    }
  }
  await deleteCredentials(context.env);
  out.done(`deleted ${file}`);
  mentionEnvironment(context);
  out.result(`Signed out of ${stored.server}${revoked ? '' : ' (the token was not revoked)'}.`);
}

function mentionEnvironment(context: CommandContext): void {
  if (context.env.SVC_TOKEN?.trim()) context.out.warn('SVC_TOKEN is still set: svc keeps using it until you unset it.');
}
