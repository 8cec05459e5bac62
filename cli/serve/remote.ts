/**
 * `svc serve <app_or_module> --server [URL]`: the live preview on a svc
 * server (the one the usual lookup finds, or URL) instead of in this
 * process. Nothing listens here and no container runs here: the project is
 * read here (the warm helper, as always), each version is uploaded and put
 * as the app's preview on the server (remote-preview.ts), every workload's
 * logs are followed — which keeps the preview from ending after its idle
 * timeout — and Ctrl-C deletes the preview.
 */
import { API_PREFIX, ApiClient } from '../api-client.js';
import { normalizeServerUrl, resolveCredentials, type ResolvedCredentials } from '../credentials.js';
import type { Output } from '../output.js';
import { shellQuote } from '../shell-quote.js';
import { RemotePreview } from './remote-preview.js';
import { runSession, type ServeBackend } from './session.js';
import type { TokenHint } from './summary.js';
import { reloadTimings } from './switches.js';

export interface RemoteFlags {
  /** true: the server of the usual lookup; a string: that server's URL. */
  readonly server: true | string;
  readonly watch?: boolean;
}

export async function serveRemote(target: string, flags: RemoteFlags, out: Output, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let client: ApiClient | undefined;
  let token: TokenHint = { expression: '$SVC_TOKEN' };
  let preview: RemotePreview | undefined;
  let timings = false;
  const backend: ServeBackend = {
    async prepare() {
      timings = reloadTimings(env); // checked before the server is asked anything
      const named = typeof flags.server === 'string' ? normalizeServerUrl(flags.server, '--server', 'usage_invalid') : null;
      // A URL given takes SVC_SERVER's place in the lookup, which sends a saved token only to its own server.
      const credentials = await resolveCredentials(named === null ? env : { ...env, SVC_SERVER: named });
      for (const warning of credentials.warnings) out.warn(warning);
      client = new ApiClient({
        server: credentials.server,
        token: credentials.token,
        serverSource: named === null ? credentials.sources.server.description : '--server',
        tokenSource: credentials.sources.token.description,
      });
      // Reachable, and the token accepted, before Python reads anything.
      await client.get(`${API_PREFIX}/whoami`);
      token = tokenHint(credentials);
      out.done(`server ${client.server} (token from ${credentials.sources.token.description})`);
      return { python: env.SVC_PYTHON?.trim() || 'python3', exclude: [] };
    },
    async open(hooks) {
      preview = new RemotePreview({ ...hooks, client: client!, out, token, timings });
      return preview;
    },
    async close(settled) {
      // A reload in progress ends first: deleting the preview under its PUT would let the PUT bring it back.
      await settled;
      await preview?.end();
    },
    dispose: async () => preview?.end(),
  };
  await runSession({ target, watch: flags.watch !== false, out }, backend);
}

/** How curl lines send the token: never the secret itself, only where to find it. */
export function tokenHint(credentials: ResolvedCredentials): TokenHint {
  const source = credentials.sources.token;
  if (source.kind === 'env') return { expression: '$SVC_TOKEN' };
  // This machine's owner token: its file, as the embedded platform's curl lines read it.
  if (source.kind === 'local') return { expression: `$(cat ${shellQuote(source.description)})` };
  return {
    expression: '$SVC_TOKEN',
    note: `URLs that need a bearer token take the token you signed in with (saved by svc login in ${source.description}): set SVC_TOKEN to it, or to one from svc token create`,
  };
}
