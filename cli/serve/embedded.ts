/**
 * `svc serve <app_or_module>` on the embedded platform: it starts in this
 * process (state in memory, the owner token in the data dir), and each
 * version of the app is deployed into it as the preview (preview.ts);
 * containers fork from a zygote of their image. Ctrl-C closes the platform,
 * which stops every container.
 */
import { loadConfig } from '../../config/load.js';
import { BundleStore } from '../../core/infra/bundles/store.js';
import { startPlatform, type Platform } from '../../core/platform/platform.js';
import type { ServerConfig } from '../../config/schema.js';
import { shellQuote } from '../shell-quote.js';
import type { Output } from '../output.js';
import { Preview } from './preview.js';
import { runSession, type ServeBackend } from './session.js';
import { reloadTimings } from './switches.js';

export interface EmbeddedFlags {
  readonly port?: string | number;
  readonly host?: string;
  readonly 'data-dir'?: string;
  readonly 'base-domain'?: string;
  readonly config?: string;
  /** false (`--no-watch`): deploy once and do not reload on changes. */
  readonly watch?: boolean;
}

export async function serveEmbedded(target: string, flags: EmbeddedFlags, out: Output): Promise<void> {
  let config: ServerConfig | undefined;
  let timings = false;
  let platform: Platform | undefined;
  const backend: ServeBackend = {
    async prepare() {
      // Checked before anything starts: a bad value must not leave a platform half up.
      timings = reloadTimings();
      config = loadConfig({
        flags: { port: flags.port, host: flags.host, dataDir: flags['data-dir'], baseDomain: flags['base-domain'] },
        file: flags.config,
      });
      return { python: config.python, exclude: [config.dataDir, config.cacheDir] };
    },
    async open(hooks) {
      const settings = config!;
      platform = await startPlatform({
        config: settings,
        // A preview keeps no state, so several previews can share a data dir (svc server keeps it in <data dir>/state).
        state: 'memory',
        logs: (line) => out.log(line.unit.split('/').pop() ?? line.unit, line.text, line.stream === 'system'),
      });
      if (platform.ownerToken.created) out.done(`created the owner token in ${platform.ownerToken.path}`);
      for (const warning of platform.ownerToken.warnings) out.warn(warning);
      out.done(`platform listening on ${platform.url} (data in ${settings.dataDir})`);
      return new Preview({
        ...hooks,
        platform,
        store: BundleStore.inDataDir(settings.dataDir),
        out,
        token: { expression: `$(cat ${shellQuote(platform.ownerToken.path)})` },
        timings,
      });
    },
    // A reload in progress ends as the platform closes (its deploy is refused): no need to wait for it first.
    close: async () => platform?.close(),
    dispose: async () => platform?.close(),
  };
  await runSession({ target, watch: flags.watch !== false, out }, backend);
}
