/**
 * The live-reload loop both kinds of `svc serve` preview share (the embedded
 * platform, preview.ts; a svc server, remote-preview.ts): the first deploy,
 * then one reload per batch of saves. A reload reads the project (the warm
 * helper says at once when it is still the version running: nothing
 * happens) and deploys it as the preview's next version, which is switched
 * in with no downtime; workloads gone from the code leave (prune). An app
 * that no longer imports, or a version that does not start, is reported and
 * the last good version keeps serving. Each reload prints one line: how long
 * from the save to the new code answering, and which files.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { DeployProgress } from '../../core/services/deployments/types.js';
import { SvcError, toSvcError } from '../../core/model/errors.js';
import { printError, type Output } from '../output.js';
import { printBundle, progressPrinter } from './progress.js';
import type { ProjectRead, ProjectReader } from './reader.js';
import type { ReloadBatch } from './scheduler.js';
import { printSummary, summaryKey, type PreviewSummary, type TokenHint } from './summary.js';

export type ChangedRead = Extract<ProjectRead, { unchanged: false }>;

/** What `svc serve` runs: a preview it starts once and reloads on each batch of saves. */
export interface LivePreview {
  /** The first deploy, from the first read; throws what fails (svc serve then exits 1). */
  start(read: ChangedRead): Promise<unknown>;
  /** One reload for a batch of saves; reports its own failures (never throws). */
  reload(batch: ReloadBatch): Promise<void>;
  /** svc is stopping: a reload cut short by it is not a failure to report. */
  stop(): void;
}

export interface ReloadingOptions {
  readonly reader: ProjectReader;
  readonly out: Output;
  /** How the printed curl lines send the token. */
  readonly token: TokenHint;
  /** Told the folders each read found (to watch them); returns those that are new. */
  readonly folders?: (folders: readonly string[]) => readonly string[];
  /** Told about new folders: a file may have appeared in one before it was watched. */
  readonly recheck?: (folder: string) => void;
  /** The time line of ReloadBatch.firstAt. */
  readonly now?: () => number;
  /** Appends where the time went to each reload line (SVC_SERVE_TIMINGS=1). */
  readonly timings?: boolean;
}

/** What a deployed version shows: its URLs and its warnings. */
export interface Shown {
  readonly summary: PreviewSummary;
  readonly warnings: readonly string[];
}

interface Running {
  readonly digest: string;
  readonly root: string;
  readonly app: string;
  readonly summary: string;
  readonly warnings: ReadonlySet<string>;
}

/** The loop; a subclass deploys a read (`V`: what its deploy answers) and says what it shows. */
export abstract class ReloadingPreview<V> implements LivePreview {
  protected readonly options: ReloadingOptions;
  #running: Running | undefined;
  /** The last reload failed: a save back to the running version says so. */
  #failing = false;
  #stopping = false;

  constructor(options: ReloadingOptions) {
    this.options = options;
  }

  /** Deploys a read as the preview's next version (the first when `first`). */
  protected abstract deploy(read: ChangedRead, progress: (event: DeployProgress) => void, first: boolean): Promise<V>;
  /** What a deployed version shows. */
  protected abstract show(version: V, read: ChangedRead): Shown;
  /** Ends the preview of an app the code no longer names (it was renamed). */
  protected abstract removeApp(app: string): Promise<void>;
  /** A version is live (first deploy or reload). */
  protected deployed(_version: V, _shown: Shown): void {}

  /** The app of the version running, if any. */
  protected get app(): string | undefined {
    return this.#running?.app;
  }

  protected get stopping(): boolean {
    return this.#stopping;
  }

  async start(read: ChangedRead): Promise<V> {
    const { out } = this.options;
    printBundle(out, read.bundle, false);
    const version = await this.deploy(read, progressPrinter(out, false), true);
    const shown = this.show(version, read);
    // Options the SDK accepted but this version ignores: say so rather than let them look effective.
    for (const warning of shown.warnings) out.warn(warning);
    printSummary(out, shown.summary, this.options.token);
    this.#running = running(read, shown);
    this.deployed(version, shown);
    return version;
  }

  stop(): void {
    this.#stopping = true;
  }

  async reload(batch: ReloadBatch): Promise<void> {
    const before = this.#running;
    if (!before || this.#stopping) return;
    const { out, reader } = this.options;
    const now = this.options.now ?? (() => performance.now());
    const files = describeFiles(batch.paths, before.root);
    const startedAt = now();
    try {
      const read = await reader.read(before.digest);
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
      const version = await this.deploy(
        read,
        (event) => {
          // The manager switches the routes right after the last unit is ready.
          if (event.type === 'workload' && event.status === 'ready') answeringAt = now();
          show(event);
        },
        false,
      );
      answeringAt ??= now();
      const timing = this.options.timings
        ? out.color.dim(
            ` [debounce ${ms(startedAt - batch.firstAt)} · read ${ms(readAt - startedAt)} · deploy ${ms(answeringAt - readAt)}]`,
          )
        : '';
      out.done(`reloaded in ${ms(answeringAt - batch.firstAt)} (${files})${timing}`);
      this.#failing = false;
      await this.#settle(before, read, version);
    } catch (error) {
      if (this.#stopping || (error instanceof SvcError && error.code === 'shutting_down')) return;
      this.#failing = true;
      const failure = toSvcError(error);
      printError(
        new SvcError(
          failure.code,
          `reload failed (${files}): ${failure.message}`,
          failure.hint === undefined ? {} : { hint: failure.hint },
        ),
      );
      out.warn('the previous version keeps serving; save again to retry');
    }
  }

  /** After a reload: the old app's preview goes if the app was renamed; new URLs and warnings are printed. */
  async #settle(before: Running, read: ChangedRead, version: V): Promise<void> {
    const { out } = this.options;
    const shown = this.show(version, read);
    this.#running = running(read, shown);
    if (before.app !== shown.summary.app) {
      await this.removeApp(before.app).catch((error: unknown) => {
        out.warn(`could not remove the preview of ${before.app}: ${toSvcError(error).message}`);
      });
    }
    for (const warning of shown.warnings) if (!before.warnings.has(warning)) out.warn(warning);
    if (summaryKey(shown.summary) !== before.summary) printSummary(out, shown.summary, this.options.token);
    this.deployed(version, shown);
  }

  #watch(folders: readonly string[]): void {
    const added = this.options.folders?.(folders) ?? [];
    // A file created in a new folder before its watch began would be missed: look once more.
    if (added.length > 0) this.options.recheck?.(added[0]!);
  }
}

function running(read: ChangedRead, shown: Shown): Running {
  return {
    digest: read.digest,
    root: read.manifest.root,
    app: shown.summary.app,
    summary: summaryKey(shown.summary),
    warnings: new Set(shown.warnings),
  };
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
