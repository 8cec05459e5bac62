/**
 * `svc serve <app_or_module> [--server [URL]]`: a live preview of the app,
 * with its URLs, the logs of every workload, and a reload on each save until
 * Ctrl-C. By default on the embedded platform, started in this process
 * (cli/serve/embedded.ts); with `--server`, on a svc server: the one the
 * usual lookup finds, or URL (cli/serve/remote.ts). Both share the reading,
 * watching and reloading of cli/serve/session.ts.
 */
import { SvcError } from '../../core/model/errors.js';
import { createOutput, printError } from '../output.js';
import type { EmbeddedFlags } from '../serve/embedded.js';

export interface ServeFlags extends EmbeddedFlags {
  /** true (`--server`): on the server of the usual lookup; a URL: on that server. */
  readonly server?: boolean | string;
}

/** The options only the embedded platform has: with --server they would silently do nothing. */
const EMBEDDED_ONLY = ['port', 'host', 'data-dir', 'base-domain', 'config'] as const;

export default async function serve(target: string, flags: ServeFlags): Promise<void> {
  const out = createOutput();
  const server = flags.server;
  if (server === undefined || server === false) {
    const { serveEmbedded } = await import('../serve/embedded.js');
    return serveEmbedded(target, flags, out);
  }
  const local = EMBEDDED_ONLY.filter((name) => flags[name] !== undefined);
  if (local.length > 0) {
    process.exitCode = printError(
      new SvcError(
        'usage_invalid',
        `${local.map((name) => `--${name}`).join(', ')} ${local.length === 1 ? 'is' : 'are'} for the embedded platform; with --server the preview runs on the server.`,
        {
          hint: `Leave ${local.length === 1 ? 'it' : 'them'} out, or leave out --server to run the preview in this process.`,
        },
      ),
    );
    return;
  }
  const { serveRemote } = await import('../serve/remote.js');
  return serveRemote(target, { server, watch: flags.watch }, out);
}

/**
 * The target and the server of `svc serve`, from what the parser made of
 * them: mri gives `--server <next word>` the next word, so in
 * `svc serve --server app.py` it took the target; a --server value that is
 * not an http(s) URL, with no target otherwise, is the target.
 */
export function serveTarget(target: string | undefined, server: unknown): { target: string; server: boolean | string | undefined } {
  const value = server === undefined || typeof server === 'boolean' ? server : String(Array.isArray(server) ? server.at(-1) : server);
  const isUrl = typeof value === 'string' && /^https?:\/\//i.test(value);
  if (target === undefined && typeof value === 'string' && !isUrl) return { target: value, server: true };
  if (target === undefined) {
    throw new SvcError('usage_invalid', 'svc serve needs the app: a .py file or a module name.', {
      hint: 'Run `svc serve app.py`, or `svc serve app.py --server` to run the preview on a svc server.',
    });
  }
  return { target, server: value };
}
