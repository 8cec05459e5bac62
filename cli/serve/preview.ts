/**
 * The preview `svc serve` keeps live: its first deploy, then one reload per
 * batch of saves. A reload reads the project (the warm helper says at once
 * when it is still the version running: nothing happens), stores the new
 * bundle and deploys it as the preview's next version — the manager starts
 * it beside the running one and switches with no downtime; requests in
 * flight finish on the old one; workloads gone from the code leave (prune).
 * An app that no longer imports, or a container that does not start, is
 * reported and the last good version keeps serving. Each reload prints one
 * line: how long from the save to the new code answering, and which files.
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { BundleStore } from '../../core/bundles/store.js';
import type { Deployment, DeployProgress } from '../../core/deployments/types.js';
import { SvcError, toSvcError } from '../../core/errors.js';
import { DEFAULT_WORKSPACE, type Platform } from '../../core/platform.js';
import { printError, type Output } from '../output.js';
import { printBundle, progressPrinter } from './progress.js';
import type { ProjectRead, ProjectReader } from './reader.js';
import type { ReloadBatch } from './scheduler.js';
import { printSummary, summaryKey } from './summary.js';

type ChangedRead = Extract<ProjectRead, { unchanged: false }>;

export interface PreviewOptions {
  readonly platform: Platform;
  readonly reader: ProjectReader;
  readonly store: BundleStore;
  readonly out: Output;
  /** How the printed curl lines read the owner token. */
  readonly tokenExpression: string;
  /** Told the folders each read found (to watch them); returns those that are new. */
  readonly folders?: (folders: readonly string[]) => readonly string[];
  /** Told about new folders: a file may have appeared in one before it was watched. */
  readonly recheck?: (folder: string) => void;
  /** The time line of ReloadBatch.firstAt. */
  readonly now?: () => number;
  /** Appends where the time went to each reload line (SVC_SERVE_TIMINGS=1). */
  readonly timings?: boolean;
}

interface Running {
  readonly digest: string;
  readonly root: string;
  readonly app: string;
  readonly summary: string;
  readonly warnings: ReadonlySet<string>;
}

export class Preview {
  readonly #options: PreviewOptions;
  #running: Running | undefined;
  /** The last reload failed: a save back to the running version says so. */
  #failing = false;
  #stopping = false;

  constructor(options: PreviewOptions) {
    this.#options = options;
  }

  /** The first deploy, from the first read; throws what fails (svc serve then exits 1). */
  async start(read: ChangedRead): Promise<Deployment> {
    const { out } = this.#options;
    printBundle(out, read.bundle, false);
    const deployment = await this.#deploy(read, progressPrinter(out, false));
    // Options the SDK accepted but this version ignores: say so rather than let them look effective.
    for (const warning of deployment.warnings) out.warn(warning);
    printSummary(out, deployment, this.#options.tokenExpression);
    this.#running = { digest: read.digest, root: read.manifest.root, app: deployment.ref.app, summary: summaryKey(deployment), warnings: new Set(deployment.warnings) };
    return deployment;
  }

  /** svc is stopping: a reload cut short by it is not a failure to report. */
  stop(): void {
    this.#stopping = true;
  }

  /** One reload for a batch of saves; reports its own failures (never throws). */
  async reload(batch: ReloadBatch): Promise<void> {
    const running = this.#running;
    if (!running || this.#stopping) return;
    const { out, reader } = this.#options;
    const now = this.#options.now ?? (() => performance.now());
    const files = describeFiles(batch.paths, running.root);
    const startedAt = now();
    try {
      const read = await reader.read(running.digest);
      const readAt = now();
      this.#watch(read.dirs);
      if (read.unchanged) {
        if (this.#failing) out.done(`back to the running version (${files}); nothing to reload`);
        this.#failing = false;
        return;
      }
      for (const line of read.manifest.logs) out.log('import', line);
      printBundle(out, read.bundle, true);
      let answeringAt: number | undefined;
      const show = progressPrinter(out, true);
      const deployment = await this.#deploy(read, (event) => {
        // The manager switches the routes right after the last unit is ready.
        if (event.type === 'workload' && event.status === 'ready') answeringAt = now();
        show(event);
      });
      answeringAt ??= now();
      const timing = this.#options.timings
        ? out.color.dim(` [debounce ${ms(startedAt - batch.firstAt)} · read ${ms(readAt - startedAt)} · deploy ${ms(answeringAt - readAt)}]`)
        : '';
      out.done(`reloaded in ${ms(answeringAt - batch.firstAt)} (${files})${timing}`);
      this.#failing = false;
      await this.#settle(running, read, deployment);
    } catch (error) {
      if (this.#stopping || (error instanceof SvcError && error.code === 'shutting_down')) return;
      this.#failing = true;
      const failure = toSvcError(error);
      printError(new SvcError(failure.code, `reload failed (${files}): ${failure.message}`, failure.hint === undefined ? {} : { hint: failure.hint }));
      out.warn('the previous version keeps serving; save again to retry');
    }
  }

  async #deploy(read: ChangedRead, progress: (event: DeployProgress) => void): Promise<Deployment> {
    const { platform, store } = this.#options;
    const { bundle, manifest } = read;
    try {
      await store.put(bundle.path, bundle.sha256);
    } finally {
      await rm(bundle.path, { force: true });
    }
    return platform.deployments.deploy(
      { spec: manifest.spec, bundleSha256: bundle.sha256, workspace: DEFAULT_WORKSPACE, stage: 'preview', principal: null, prune: true },
      progress,
    );
  }

  /** After a reload: the old app's preview goes if the app was renamed; new URLs and warnings are printed. */
  async #settle(before: Running, read: ChangedRead, deployment: Deployment): Promise<void> {
    const { out, platform } = this.#options;
    this.#running = { digest: read.digest, root: read.manifest.root, app: deployment.ref.app, summary: summaryKey(deployment), warnings: new Set(deployment.warnings) };
    if (before.app !== deployment.ref.app) {
      await platform.deployments.remove({ workspace: DEFAULT_WORKSPACE, app: before.app, stage: 'preview' }).catch((error: unknown) => {
        out.warn(`could not remove the preview of ${before.app}: ${toSvcError(error).message}`);
      });
    }
    for (const warning of deployment.warnings) if (!before.warnings.has(warning)) out.warn(warning);
    if (summaryKey(deployment) !== before.summary) printSummary(out, deployment, this.#options.tokenExpression);
  }

  #watch(folders: readonly string[]): void {
    const added = this.#options.folders?.(folders) ?? [];
    // A file created in a new folder before its watch began would be missed: look once more.
    if (added.length > 0) this.#options.recheck?.(added[0]!);
  }
}

function ms(value: number): string {
  return `${Math.max(0, Math.round(value))} ms`;
}

/**
 * `app.py`, `app.py, lib/util.py`, `a.py, b.py, c.py and 4 more`: the files
 * that changed and are there now (an editor's or `sed -i`'s temporary file,
 * gone by now, is not news), or the deleted ones when only those changed.
 */
export function describeFiles(paths: readonly string[], root: string): string {
  const present = paths.filter((file) => existsSync(path.join(root, file)));
  const named = present.length > 0 ? present : paths;
  const shown = named.slice(0, 3).join(', ');
  return named.length > 3 ? `${shown} and ${named.length - 3} more` : shown || 'the project';
}
