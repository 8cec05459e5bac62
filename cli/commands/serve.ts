import { loadConfig } from '../../config/load.js';
import { BundleStore } from '../../core/bundles/store.js';
import { startPlatform, type Platform } from '../../core/platform.js';
import { shellQuote } from '../shell-quote.js';
import { createOutput, printError } from '../output.js';
import { Preview } from '../serve/preview.js';
import { createProjectReader, type ProjectReader } from '../serve/reader.js';
import { ReloadScheduler } from '../serve/scheduler.js';
import { ProjectWatcher } from '../serve/watcher.js';
import { onStopSignal } from '../stop-signal.js';

export interface ServeFlags {
  readonly port?: string | number;
  readonly host?: string;
  readonly 'data-dir'?: string;
  readonly 'base-domain'?: string;
  readonly config?: string;
  /** false (`--no-watch`): deploy once and do not reload on changes. */
  readonly watch?: boolean;
}

/**
 * `svc serve <app_or_module>`: starts the embedded platform in this process,
 * deploys a preview of the app, prints each workload's URL with a curl line,
 * streams the workloads' logs, and removes everything on Ctrl-C. Meanwhile it
 * watches the project and swaps in each saved version (cli/serve/): a warm
 * Python reads the project, and containers fork from a zygote of their image.
 */
export default async function serve(target: string, flags: ServeFlags): Promise<void> {
  const out = createOutput();
  let platform: Platform | undefined;
  let reader: ProjectReader | undefined;
  let watcher: ProjectWatcher | undefined;
  let scheduler: ReloadScheduler | undefined;
  let preview: Preview | undefined;
  let serving = false;
  const stopWatching = async () => {
    preview?.stop();
    watcher?.close();
    // First: a read in progress (an import that hangs) ends now rather than at its timeout.
    reader?.close();
    await scheduler?.close().catch(() => {});
  };
  const stop = onStopSignal(async () => {
    // Before the preview is up there is nothing to drain: exit now; the driver's exit hook kills any container.
    if (!serving) process.exit(130);
    out.step('stopping the preview…');
    preview?.stop();
    watcher?.close();
    // A reload in progress ends as the platform closes (its deploy is refused): no need to wait for it first.
    await Promise.all([platform?.close(), stopWatching()]);
    out.done('stopped');
  });
  try {
    const config = loadConfig({ flags: { port: flags.port, host: flags.host, dataDir: flags['data-dir'], baseDomain: flags['base-domain'] }, file: flags.config });
    const watch = flags.watch !== false;
    out.step(`reading ${target}`);
    reader = createProjectReader({
      target,
      python: config.python,
      warm: watch && process.env.SVC_SERVE_WARM !== '0',
      warn: (message) => out.warn(message),
      log: (line) => out.log('svc', line, true),
      exclude: [config.dataDir, config.cacheDir],
    });
    const first = await reader.read(null);
    if (first.unchanged) throw new Error('the first read of the project found it unchanged');
    for (const line of first.manifest.logs) out.log('import', line);
    const { spec } = first.manifest;
    out.done(`app ${spec.name}: ${spec.workloads.length} workload${spec.workloads.length === 1 ? '' : 's'}`);

    if (watch) {
      // Watching starts now, so that a save during the first deploy is not missed: it is reloaded right after.
      scheduler = new ReloadScheduler((batch) => preview!.reload(batch), { paused: true });
      const reloads = scheduler;
      watcher = new ProjectWatcher(first.manifest.root, (file) => reloads.notify(file), (message) => out.warn(message));
      watcher.sync(first.dirs);
    }

    platform = await startPlatform({
      config,
      // A preview keeps no state, so several previews can share a data dir (svc server keeps it in <data dir>/state).
      state: 'memory',
      // Containers fork from a zygote of their image: a reload starts no new interpreter (SVC_ZYGOTES=0 turns it off).
      zygotes: process.env.SVC_ZYGOTES !== '0',
      logs: (line) => out.log(line.unit.split('/').pop() ?? line.unit, line.text, line.stream === 'system'),
    });
    if (platform.ownerToken.created) out.done(`created the owner token in ${platform.ownerToken.path}`);
    for (const warning of platform.ownerToken.warnings) out.warn(warning);
    out.done(`platform listening on ${platform.url} (data in ${config.dataDir})`);

    const projectWatcher = watcher;
    const reloads = scheduler;
    preview = new Preview({
      platform,
      reader,
      store: BundleStore.inDataDir(config.dataDir),
      out,
      tokenExpression: `$(cat ${shellQuote(platform.ownerToken.path)})`,
      folders: (folders) => projectWatcher?.sync(folders) ?? [],
      recheck: (folder) => reloads?.notify(folder),
      timings: process.env.SVC_SERVE_TIMINGS === '1',
    });
    await preview.start(first);
    serving = true;
    if (scheduler) {
      scheduler.resume();
      out.step(`watching ${first.manifest.root} for changes; logs of every workload follow; press Ctrl-C to stop`);
    } else {
      reader.close();
      out.step('logs of every workload follow; press Ctrl-C to stop');
    }
    await stop.wait;
  } catch (error) {
    process.exitCode = printError(error);
    await stopWatching();
    await platform?.close();
  } finally {
    stop.dispose();
  }
}
