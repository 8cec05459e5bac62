/**
 * `svc login [--server URL] [--no-browser]`: the device flow of RFC 8628
 * against the server's API. Asks for a code (`POST /api/v1/device/code`),
 * always prints the link and the user code (and opens the link in a browser
 * on a terminal unless --no-browser), then polls `POST /api/v1/device/token`
 * every `interval` seconds (5 s longer after each `slow_down`) until the
 * request is approved, denied or expired. The token it gets is saved with the
 * server and the workspace in the credentials file (credentials.ts).
 */
import os from 'node:os';
import { isSvcError, SvcError } from '../../core/model/errors.js';
import { API_PREFIX, ApiClient, dropBody } from '../api-client.js';
import type { CommandContext } from '../context.js';
import { credentialsPath, localServer, normalizeServerUrl, resolveServer, writeCredentials, type ResolvedServer } from '../credentials.js';

export interface LoginFlags {
  readonly server?: string;
  /** false with --no-browser. */
  readonly browser?: boolean;
}

/** RFC 8628 §3.4. */
const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
/** RFC 8628 §3.5: the interval when the server names none, and the step after `slow_down`. */
const DEFAULT_INTERVAL_SECONDS = 5;
const SLOW_DOWN_SECONDS = 5;

interface DeviceCode {
  readonly device_code: string;
  readonly user_code: string;
  readonly verification_uri: string;
  readonly verification_uri_complete?: string;
  readonly expires_in: number;
  readonly interval?: number;
}

interface DeviceToken {
  readonly access_token: string;
  readonly workspace?: string;
  readonly token_id?: string;
}

export interface Whoami {
  readonly workspace: string;
  readonly subject: string;
  readonly tokenId: string | null;
  readonly role: string;
}

/** Signs in; returns the exit code (130 when stopped with Ctrl-C before approval). */
export default async function login(context: CommandContext, flags: LoginFlags = {}): Promise<number> {
  const { out } = context;
  const server = await serverToSignInTo(context, flags);
  const api = new ApiClient({ server: server.url, serverSource: server.source.description });

  const code = await api.post<DeviceCode>(`${API_PREFIX}/device/code`, { client_name: clientName() });
  if (typeof code?.device_code !== 'string' || typeof code.user_code !== 'string' || typeof code.verification_uri !== 'string') {
    throw new SvcError(
      'unexpected_response',
      `${server.url} answered the device-code request without a device_code, user_code and verification_uri.`,
      {
        hint: 'Check that the server is an svc server.',
      },
    );
  }
  const link = code.verification_uri_complete ?? code.verification_uri;
  const { bold, dim } = palette(context);
  context.stderr.write(
    `\nTo sign in to ${server.url}, open this link, check that the page shows the code below, and approve:\n\n` +
      `  ${bold(link)}\n\n` +
      `  code: ${bold(code.user_code)}\n\n`,
  );
  if (flags.browser !== false && context.interactive) {
    context.openBrowser(link);
    out.step(`opened the link in your browser ${dim('(if nothing opened, copy the link)')}`);
  }
  out.step(`waiting for approval (the code expires in ${Math.round(code.expires_in / 60)} minutes); press Ctrl-C to stop`);

  const token = await poll(context, api, code);
  if (token === null) {
    out.warn('stopped: not signed in, nothing was saved');
    return 130;
  }

  const signedIn = new ApiClient({
    server: server.url,
    token: token.access_token,
    serverSource: server.source.description,
    tokenSource: 'the sign-in just made',
  });
  const who = await signedIn.get<Whoami>(`${API_PREFIX}/whoami`);
  const file = await writeCredentials(
    { server: server.url, token: token.access_token, workspace: who.workspace ?? token.workspace ?? null },
    context.env,
  );
  out.done(`saved the token${who.tokenId ? ` ${who.tokenId}` : ''} in ${file}`);
  if (context.env.SVC_TOKEN?.trim())
    out.warn('SVC_TOKEN is set: svc uses it rather than the token just saved; unset it to use this sign-in.');
  const envServer = context.env.SVC_SERVER?.trim();
  if (envServer && normalizeSafely(envServer) !== server.url)
    out.warn(`SVC_SERVER is set to ${envServer}: svc talks to it rather than ${server.url}; unset it to use this sign-in.`);
  out.result(`Signed in to ${server.url} as ${who.subject} (${who.role}) in workspace ${who.workspace}.`);
  return 0;
}

/** --server, else the server svc would use (SVC_SERVER, the credentials file, this machine); a damaged credentials file is replaced, not an obstacle. */
async function serverToSignInTo(context: CommandContext, flags: LoginFlags): Promise<ResolvedServer> {
  if (flags.server !== undefined && String(flags.server).trim() !== '') {
    return { url: normalizeServerUrl(String(flags.server), '--server', 'usage_invalid'), source: { kind: 'env', description: '--server' } };
  }
  try {
    return await resolveServer(context.env);
  } catch (error) {
    const file = credentialsPath(context.env);
    if (!isSvcError(error) || error.code !== 'config_invalid' || (error.details as { path?: string } | undefined)?.path !== file)
      throw error;
    context.out.warn(`${error.message} Signing in replaces it.`);
    return { url: localServer(context.env), source: { kind: 'local', description: 'a server on this machine' } };
  }
}

/**
 * Polls the token endpoint until it answers a token (returned), denies or
 * expires (thrown), or the context is stopped (null). Waits `interval`
 * before each poll, 5 s more from each `slow_down` on, and `Retry-After`
 * when the server rate-limits.
 */
async function poll(context: CommandContext, api: ApiClient, code: DeviceCode): Promise<DeviceToken | null> {
  let intervalSeconds = typeof code.interval === 'number' && code.interval > 0 ? code.interval : DEFAULT_INTERVAL_SECONDS;
  let extraWaitSeconds = 0;
  for (;;) {
    await context.sleep((intervalSeconds + extraWaitSeconds) * 1000);
    extraWaitSeconds = 0;
    if (context.signal.aborted) return null;
    let response;
    try {
      response = await api.request('POST', `${API_PREFIX}/device/token`, {
        json: { grant_type: DEVICE_CODE_GRANT, device_code: code.device_code },
        signal: context.signal,
      });
    } catch (error) {
      if (context.signal.aborted) return null;
      throw error;
    }
    if (response.status === 200) {
      const token = (await response.json()) as DeviceToken;
      if (typeof token?.access_token !== 'string')
        throw new SvcError('unexpected_response', `${api.server} answered the sign-in without an access_token.`);
      return token;
    }
    if (response.status === 429) {
      extraWaitSeconds = Math.max(0, Number(response.headers.get('retry-after')) || intervalSeconds);
      dropBody(response);
      continue;
    }
    const text = await response.text();
    const error = oauthError(text);
    if (response.status !== 400 || error === null) {
      throw api.errorFrom(response.status, text, 'POST', `${API_PREFIX}/device/token`);
    }
    switch (error.error) {
      case 'authorization_pending':
        continue;
      case 'slow_down':
        intervalSeconds += SLOW_DOWN_SECONDS;
        continue;
      case 'access_denied':
        throw new SvcError('login_denied', 'the sign-in request was denied; nothing was saved.', {
          hint: 'Run `svc login` again and approve the request whose code matches the one shown here.',
        });
      case 'expired_token':
        throw new SvcError('login_expired', 'the sign-in request expired before it was approved; nothing was saved.', {
          hint: `Run \`svc login\` again and approve it within ${Math.round(code.expires_in / 60)} minutes.`,
        });
      default:
        throw new SvcError(
          'unexpected_response',
          `the server refused the sign-in: ${error.error}${error.error_description ? ` (${error.error_description})` : ''}.`,
          {
            hint: 'Run `svc login` again.',
          },
        );
    }
  }
}

function oauthError(text: string): { error: string; error_description?: string } | null {
  try {
    const value = JSON.parse(text) as { error?: unknown; error_description?: unknown };
    if (typeof value?.error !== 'string') return null;
    return { error: value.error, ...(typeof value.error_description === 'string' ? { error_description: value.error_description } : {}) };
  } catch {
    return null;
  }
}

/** What the approver sees: `svc CLI on <host>`, within the 80 characters the server takes. */
function clientName(): string {
  return `svc CLI on ${os.hostname()}`.slice(0, 80);
}

function normalizeSafely(url: string): string | null {
  try {
    return normalizeServerUrl(url, 'SVC_SERVER');
  } catch {
    return null;
  }
}

/** Bold and dim on stderr when it is a terminal (the link block is stderr's). */
function palette(context: CommandContext): { bold: (s: string) => string; dim: (s: string) => string } {
  const on = Boolean(context.stderr.isTTY) && !context.env.NO_COLOR;
  return { bold: (s) => (on ? `\u001b[1m${s}\u001b[22m` : s), dim: (s) => (on ? `\u001b[2m${s}\u001b[22m` : s) };
}
