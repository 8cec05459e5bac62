/**
 * What every `svc serve` does, wherever its preview runs (embedded.ts: in
 * this process; remote.ts: on a svc server): read the project with the warm
 * helper, watch it, start the preview, reload it on each batch of saves, and
 * on Ctrl-C (or SIGTERM) stop everything and exit 0 with "stopped". Where it
 * differs is the backend's.
 */
import { printError, type Output } from '../output.js';
import { onStopSignal } from '../stop-signal.js';
import { createProjectReader, type ProjectReader } from './reader.js';
import type { LivePreview } from './reloading.js';
import { ReloadScheduler } from './scheduler.js';
import { ProjectWatcher } from './watcher.js';
import { warmReads } from './switches.js';

/** Given to `open`: what the preview needs from the session. */
export interface SessionHooks {
  readonly reader: ProjectReader;
  /** Told the folders each read found (to watch them); returns those that are new. */
  readonly folders: (folders: readonly string[]) => readonly string[];
  /** Told about new folders: a file may have appeared in one before it was watched. */
  readonly recheck: (folder: string) => void;
}

export interface ServeBackend {
  /** Before the project is read (settings, the server to reach): the interpreter, and svc's own folders never to read. */
  prepare(): Promise<{ readonly python: string; readonly exclude: readonly string[] }>;
  /** Once the app is read: brings up where it runs, and the preview to start there. */
  open(hooks: SessionHooks): Promise<LivePreview>;
  /** Ctrl-C once the preview is up: ends it. `settled` resolves once the watcher, reader and any reload in progress are done. */
  close(settled: Promise<void>): Promise<void>;
  /** After a failure: releases what `open` brought up. */
  dispose(): Promise<void>;
}

export interface SessionOptions {
  readonly target: string;
  /** false (`--no-watch`): deploy once and do not reload on changes. */
  readonly watch: boolean;
  readonly out: Output;
}

export async function runSession(options: SessionOptions, backend: ServeBackend): Promise<void> {
  const { out, target } = options;
  let reader: ProjectReader | undefined;
  let watcher: ProjectWatcher | undefined;
  let scheduler: ReloadScheduler | undefined;
  let preview: LivePreview | undefined;
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
    const settled = stopWatching();
    await Promise.all([backend.close(settled), settled]);
    out.done('stopped');
  });
  try {
    const watch = options.watch;
    // Read (and checked) before anything starts, --no-watch or not.
    const warm = warmReads() && watch;
    const { python, exclude } = await backend.prepare();
    out.step(`reading ${target}`);
    reader = createProjectReader({
      target,
      python,
      warm,
      warn: (message) => out.warn(message),
      log: (line) => out.log('svc', line, true),
      exclude,
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
      watcher = new ProjectWatcher(
        first.manifest.root,
        (file) => reloads.notify(file),
        (message) => out.warn(message),
      );
      watcher.sync(first.dirs);
    }
    const projectWatcher = watcher;
    const reloads = scheduler;
    preview = await backend.open({
      reader,
      folders: (folders) => projectWatcher?.sync(folders) ?? [],
      recheck: (folder) => reloads?.notify(folder),
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
    await backend.dispose();
  } finally {
    stop.dispose();
  }
}
